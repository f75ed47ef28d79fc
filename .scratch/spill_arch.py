import sys
from kernelab.ops import discover
from kernelab.gpu import compile_file
op = discover()[sys.argv[1]]; v = op.variant(sys.argv[2])
for arch in ("sm_80", "sm_90", "sm_100", "sm_120"):
    m = compile_file(v.path, arch=arch, defines=op.defines(v))
    bad = {k: (r.registers, r.spill_stores, r.spill_loads) for k, r in m.resources.items() if r.spills}
    print(arch, "spills:", bad or "none", "max regs", max(r.registers for r in m.resources.values()))
