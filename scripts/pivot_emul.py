"""Which pivot layernorm should centre a row's sums on, emulated in fp32 on the CPU (session 24, issue 7).

Every layernorm kernel summed x - x[row][0] until session 24; a row led by an outlier (x[0] = 1000 among
N(0, 1)) then missed fp32's tolerance on the H200. This emulates layernorm v0's order (256 threads
striding the row, a pairwise tree over threads) in numpy float32 for candidate pivots: x[0]; x[0] with a
compensated centre ((x - hi) - lo); the mean of the first 4 / 8 elements with it; the median of x[0..2],
with and without it. Each cell is the max abs error and, in brackets, the worst error over the op's fp32
tolerance (atol 1e-5 + rtol 1e-5 |ref|; above 1 fails), against a float64 reference.

Session 24 (NOTES.md): on rows led by 1000 at N = 1000 / 8192 / 40000, x[0] 0.41 / 0.80 / 2.16, the median of
three 0.00 / 0.01 / 0.02 (the plain rows' level). Two outliers among the first three ("lead2") fail x[0], its
compensated centre and the median at N >= 8192 (1.2-2.3); the mean of the first 8 passes (0.10 / 0.73).
Usage: python3 scripts/pivot_emul.py (CPU only)."""
import numpy as np

f32 = np.float32
CANDIDATES = (("A x0", {}), ("B x0+comp", dict(comp=True)), ("C mean4+comp", dict(pivot_kind="mean4", comp=True)),
              ("C mean8+comp", dict(pivot_kind="mean8", comp=True)), ("E med3", dict(pivot_kind="med3")),
              ("F med3+comp", dict(pivot_kind="med3", comp=True)))


def thread_sums(vals, threads):
    """Thread t sums vals[t::threads] in order, then a pairwise tree over the threads (v0's block_sum)."""
    pad = (-len(vals)) % threads
    v = np.concatenate([vals, np.zeros(pad, f32)]).reshape(-1, threads)
    acc = np.zeros(threads, f32)
    for r in v:
        acc = (acc + r).astype(f32)
    while len(acc) > 1:
        acc = (acc[0::2] + acc[1::2]).astype(f32)
    return acc[0]


def two_sum(a, b):
    s = f32(a + b)
    bb = f32(s - a)
    return s, f32(f32(a - f32(s - bb)) + f32(b - bb))


def layernorm(x, w, b, pivot_kind="x0", comp=False, threads=256, eps=1e-5):
    n = len(x)
    if pivot_kind == "x0":
        p = x[0]
    elif pivot_kind == "med3":
        p = f32(np.median(x[:3]))
    else:  # "meanK": the mean of the first K elements
        k = min(int(pivot_kind[4:]), n)
        p = f32(thread_sums(x[:k], 1) / f32(k))
    m = f32(thread_sums((x - p).astype(f32), threads) / f32(n))
    if comp:  # the centre as hi + lo: (x - hi) - lo
        hi, lo = two_sum(p, m)
        c = ((x - hi).astype(f32) - lo).astype(f32)
    else:
        c = ((x - p).astype(f32) - m).astype(f32)
    var = f32(thread_sums((c * c).astype(f32), threads) / f32(n))
    rstd = f32(1.0 / np.sqrt(np.float64(var + f32(eps))))
    return (c * rstd * w + b).astype(f32)


def reference(x, w, b, eps=1e-5):
    x = x.astype(np.float64)
    m = x.mean()
    return (x - m) / np.sqrt(((x - m) ** 2).mean() + eps) * w + b


def main():
    rng = np.random.default_rng(0)
    for n in (1000, 8192, 40000):
        for case in ("plain", "shift", "lead", "lead2", "lead1"):
            x, w, b = (rng.standard_normal(n).astype(f32) for _ in range(3))
            if case == "shift":
                x = (x + f32(1000)).astype(f32)
            elif case == "lead":
                x[0] = 1000
            elif case == "lead1":
                x[1] = 1000
            elif case == "lead2":
                x[0] = x[1] = 1000
            r = reference(x, w, b)
            cells = []
            for name, kw in CANDIDATES:
                err = np.abs(layernorm(x, w, b, **kw) - r)
                cells.append(f"{name}: {err.max():.1e} ({(err / (1e-5 + 1e-5 * np.abs(r))).max():.2f})")
            print(n, case, " | ".join(cells))


if __name__ == "__main__":
    main()
