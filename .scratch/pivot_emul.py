import numpy as np
f32 = np.float32
def thread_sums(vals, T):
    # vals: float32 array (N,), thread t sums vals[t::T] sequentially, then a pairwise tree over threads
    N = len(vals); pad = (-N) % T
    v = np.concatenate([vals, np.zeros(pad, f32)]).reshape(-1, T)
    acc = np.zeros(T, f32)
    for r in v: acc = (acc + r).astype(f32)
    while len(acc) > 1: acc = (acc[0::2] + acc[1::2]).astype(f32)
    return acc[0]
def two_sum(a, b):
    s = f32(a + b); bb = f32(s - a); return s, f32(f32(a - f32(s - bb)) + f32(b - bb))
def ln(x, w, b, pivot_kind="x0", comp=False, refine=False, T=256, eps=1e-5):
    N = len(x)
    if pivot_kind == "x0": p = x[0]
    elif pivot_kind == "med3": p = f32(np.median(x[:3]))
    elif pivot_kind.startswith("mean"):
        K = min(int(pivot_kind[4:]), N); p = f32(thread_sums(x[:K], 1) / f32(K))
    d = (x - p).astype(f32)
    m = f32(thread_sums(d, T) / f32(N))
    hi, lo = two_sum(p, m)
    if refine:  # another sum pass about hi
        d2 = ((x - hi)).astype(f32)
        m2 = f32(thread_sums(d2, T) / f32(N))
        hi, lo2 = two_sum(hi, m2); lo = f32(lo + lo2)
    if comp or refine: c = ((x - hi).astype(f32) - lo).astype(f32)
    else: c = ((x - p).astype(f32) - m).astype(f32)
    var = f32(thread_sums((c * c).astype(f32), T) / f32(N))
    rstd = f32(1.0 / np.sqrt(np.float64(var + f32(eps))))
    return (c * rstd * w + b).astype(f32)
def ref(x, w, b, eps=1e-5):
    x = x.astype(np.float64); m = x.mean(); v = ((x - m) ** 2).mean()
    return (x - m) / np.sqrt(v + eps) * w + b
rng = np.random.default_rng(0)
for N in (1000, 8192, 40000):
    for case in ("plain", "shift", "lead", "lead2", "lead1"):
        x = rng.standard_normal(N).astype(f32); w = rng.standard_normal(N).astype(f32); bb = rng.standard_normal(N).astype(f32)
        if case == "shift": x = (x + f32(1000)).astype(f32)
        elif case == "lead": x[0] = 1000
        elif case == "lead1": x[1] = 1000
        elif case == "lead2": x[0] = 1000; x[1] = 1000
        r = ref(x, w, bb)
        out = []
        for name, kw in (("A x0", {}), ("B x0+comp", dict(comp=True)), ("C mean4+comp", dict(pivot_kind="mean4", comp=True)),
                         ("C mean8+comp", dict(pivot_kind="mean8", comp=True)), ("E med3", dict(pivot_kind="med3")), ("F med3+comp", dict(pivot_kind="med3", comp=True))):
            y = ln(x, w, bb, **kw)
            err = np.abs(y - r); viol = (err / (1e-5 + 1e-5 * np.abs(r))).max()
            out.append(f"{name}: {err.max():.1e} ({viol:.2f})")
        print(N, case, " | ".join(out))
