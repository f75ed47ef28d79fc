import sys, re, collections, json
from kernelab.ops import discover
from kernelab.gpu import compile_file
sys.path.insert(0, "/work/main/tests/cpu")
from test_norm_l2_two_pass import _sass_lines
LN = discover()["layernorm"]; v = LN.variant("v5_l2_two_pass")
m = compile_file(v.path, arch="sm_90", defines=LN.defines(v))
ins = _sass_lines(m.cubin, "layernorm_" + sys.argv[1])
bar = next(i for i, l in enumerate(ins) if "BAR.SYNC" in l)
def op(l):
    t = re.sub(r"^\s*/\*[0-9a-f]+\*/\s*", "", l)
    t = re.sub(r"^@!?U?P\w+\s+", "", t)
    return t.split()[0].split(".")[0]
pre = collections.Counter(op(l) for l in ins[:bar]); post = collections.Counter(op(l) for l in ins[bar:])
json.dump({"pre": pre, "post": post}, open(sys.argv[2], "w"))
