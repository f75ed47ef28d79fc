"""The worker's child process: `python -m kernelab.check._child TASK_DIR` (started by worker.run_task).

A module of its own, so that the package's import of `worker` and this entry point are not
the same module run twice.
"""

import sys

from kernelab.check.worker import _child_main

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m kernelab.check._child TASK_DIR  (started by kernelab.check.worker.run_task)")
    _child_main(sys.argv[1])
