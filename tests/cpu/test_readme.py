"""The README's two commands, and .ci/run running exactly the second one."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    return [l.strip() for l in block.strip().splitlines() if l.strip()]


def test_readme_starts_with_exactly_two_commands():
    text = (ROOT / "README.md").read_text()
    assert text.index("```bash") < 40, "the commands must open the README"
    cmds = readme_commands()
    assert len(cmds) == 2
    assert cmds[0].endswith("kernelab run") and "pip install -e ." in cmds[0]
    assert "pytest" in cmds[1] and "[test]" in cmds[1]


def test_ci_runs_the_readme_test_command_and_nothing_else():
    lines = [l.strip() for l in (ROOT / ".ci" / "run").read_text().splitlines()
             if l.strip() and not l.strip().startswith("#")]
    commands = [l for l in lines if not l.startswith(("set ", "cd "))]
    assert commands == [readme_commands()[1]]


def test_python_m_kernelab_works():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "kernelab", "version"], capture_output=True, text=True,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0 and out.stdout.strip() == __import__("kernelab").__version__
