"""Default tolerances per dtype, as data. An op overrides entries in `OpSpec.tolerances`.

An element passes when |got - expected| <= atol + rtol * |expected|, with `expected` the
float64 reference, OR when got equals the reference rounded once to the output dtype (the
correctly rounded answer always passes, so (0, 0) means "correctly rounded").

Why these numbers: they are torch.testing's defaults for the float types (a few ulps of
the dtype: fp32 eps 1.19e-7 -> rtol 1.3e-6 is ~11 ulp; bf16 eps 7.8e-3 -> rtol 1.6e-2 is
~2 ulp; fp16 eps 9.8e-4 -> 1e-3 is ~1 ulp). They are loose enough for a reduction's
reordering, and tight enough that bf16 math in an fp32 op (errors ~2^-9 relative, ~3000x
the fp32 rtol) fails. Exact ops (elementwise add, copies, transposes) should declare (0, 0).
"""

from __future__ import annotations

DEFAULTS: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1.3e-6, 1e-5),
    "tf32": (1e-3, 1e-5),  # not a storage dtype: used to recognise tf32 math in an fp32 op
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    # fp8: half of the spacing between neighbours at 1.0 (e4m3: 2^-3, e5m2: 2^-2).
    "float8_e4m3fn": (1.25e-1, 2.0 ** -9),
    "float8_e5m2": (2.5e-1, 2.0 ** -16),
    # Integers and booleans are exact.
    "int8": (0.0, 0.0), "uint8": (0.0, 0.0), "int16": (0.0, 0.0), "int32": (0.0, 0.0),
    "int64": (0.0, 0.0), "bool": (0.0, 0.0),
}


def _name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def tolerance(op, dtype, overrides: dict | None = None) -> tuple[float, float]:
    """(rtol, atol) for `dtype` (a name like "float32" or a torch.dtype) in `op`.

    Precedence: `overrides` (a caller's explicit choice), then `op.tolerances`, then DEFAULTS.
    `op` may be None (defaults only).
    """
    name = _name(dtype)
    for table in (overrides or {}, getattr(op, "tolerances", None) or {}):
        if name in table:
            return _validated(table[name], name, "the op's tolerances" if table is not overrides else "overrides")
    if name not in DEFAULTS:
        raise ValueError(f"no default tolerance for dtype {name!r} (have: {', '.join(DEFAULTS)}). "
                         f"Fix: declare it in the op, e.g. tolerances = {{{name!r}: (rtol, atol)}}.")
    return DEFAULTS[name]


def _validated(pair, name: str, where: str) -> tuple[float, float]:
    try:
        rtol, atol = (float(x) for x in pair)
    except (TypeError, ValueError):
        raise ValueError(f"{where}[{name!r}] must be a pair (rtol, atol) of numbers, got {pair!r}") from None
    if rtol < 0 or atol < 0:
        raise ValueError(f"{where}[{name!r}] = {pair!r}: tolerances cannot be negative")
    return rtol, atol
