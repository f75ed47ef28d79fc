"""kernelab::gelu_bias, the best variant as a PyTorch operator (works under torch.compile).

    torch.ops.kernelab.gelu_bias(x, bias) -> gelu(x + bias), exact (erf) GELU like
    torch.nn.functional.gelu's default; x [..., N], bias [N], both float32 or both bfloat16,
    on a CUDA device. The result is a new contiguous tensor of x's shape.
"""

from __future__ import annotations

import torch

from kernelab.ops.base import Case
from kernelab.ops.build import run_variant

from .op import OP


@torch.library.custom_op("kernelab::gelu_bias", mutates_args=())
def kernelab_gelu_bias(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    if x.dim() < 1 or bias.shape != (x.shape[-1],):
        raise ValueError(f"kernelab::gelu_bias: bias must be 1-D with x's last dimension; got x {tuple(x.shape)} "
                         f"and bias {tuple(bias.shape)}")
    if x.dtype != bias.dtype:
        raise TypeError(f"kernelab::gelu_bias: x is {x.dtype} and bias {bias.dtype}; cast one to the other")
    dtype = str(x.dtype).replace("torch.", "")
    if dtype not in OP.dtypes:
        raise TypeError(f"kernelab::gelu_bias supports {', '.join(OP.dtypes)}, got {x.dtype}")
    if x.device.type != "cuda" or bias.device != x.device:
        raise ValueError(f"kernelab::gelu_bias runs on one CUDA device; x is on {x.device}, bias on {bias.device}")
    y = x.new_empty(x.shape)
    if x.numel() == 0:
        return y
    cols = x.shape[-1]
    x2 = x.contiguous().view(-1, cols)
    run_variant(OP, OP.variant(OP.best_variant), Case((x2.shape[0], cols), dtype),
                {"x": x2, "bias": bias.contiguous()}, {"y": y.view(-1, cols)})
    return y


@kernelab_gelu_bias.register_fake
def _(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return x.new_empty(x.shape)
