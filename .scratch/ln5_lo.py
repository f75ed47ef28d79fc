import sys, json
from kernelab.ops import discover
from kernelab.gpu import compile_file
from kernelab.analysis.load_order import load_order
from kernelab.analysis.sass import disassemble
LN = discover()[sys.argv[1]]; v = LN.variant(sys.argv[2])
defs = {**LN.defines(v), **json.loads(sys.argv[3] if len(sys.argv) > 3 else "{}")}
m = compile_file(v.path, arch="sm_90", defines=defs)
res = m.resources
lo = {o.name: o for o in load_order(disassemble(m.cubin))}
for fn in sorted(lo):
    r = res.get(fn)
    print(fn, getattr(r, "registers", r), getattr(r, "spills", ""), lo[fn])
