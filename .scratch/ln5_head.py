import sys, re
sys.path.insert(0, "tests/cpu")
from kernelab.ops import discover
from kernelab.gpu import compile_file
from test_norm_l2_two_pass import _sass_lines
LN = discover()["layernorm"]; v5 = LN.variant("v5_l2_two_pass")
m = compile_file(v5.path, arch="sm_90", defines=LN.defines(v5))
for dt in sys.argv[1:]:
    ins = _sass_lines(m.cubin, f"layernorm_{dt}")
    for ln in ins: print(ln)
