import sys, json, re
from kernelab.ops import discover
from kernelab.gpu import compile_file
sys.path.insert(0, "tests/cpu")
from test_norm_l2_two_pass import _sass_lines
LN = discover()["layernorm"]; v = LN.variant("v5_l2_two_pass")
m = compile_file(v.path, arch="sm_90", defines=LN.defines(v))
for dt in ("f32", "bf16"):
    ins = _sass_lines(m.cubin, f"layernorm_{dt}")
    ops = [re.sub(r"^\s*/\*[0-9a-f]+\*/\s*(@!?U?P\w+\s+)?", "", l).split()[0] for l in ins if "/*" in l]
    bar = next(i for i, l in enumerate(ins) if "BAR.SYNC" in l)
    print(dt, "total", len(ins), "before BAR", bar, "LDG", sum("LDG" in l for l in ins), "SHFL", sum("SHFL" in l for l in ins))
