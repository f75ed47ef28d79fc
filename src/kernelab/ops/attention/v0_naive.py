"""Host side of v0_naive: allocate the fp32 score workspace, then scores -> softmax -> P V."""

from __future__ import annotations

import math


def launch(op, kernel, variant, case, inputs, outputs):
    import torch

    from kernelab.ops.attention.op import case_dims, validate_tensors

    b, h, s, d, causal = case_dims(case)
    q, k, v, o, lse = validate_tensors(case, inputs, outputs)
    if s == 0 or b * h == 0:
        return
    bh = b * h
    # The workspace: allocated per call on torch's current stream (the caching allocator makes
    # this cheap after the first call); op.supports() refuses cases where it would exceed 16 GiB.
    scores = torch.empty((bh, s, s), dtype=torch.float32, device=q.device)
    softmax = kernel.module.kernel("attention_softmax_f32")
    pv = kernel.module.kernel("attention_pv_bf16")
    kernel(q, k, scores, s, d, int(causal), 1.0 / math.sqrt(d), grid=(-(-s // 32), -(-s // 8), bh), block=(32, 8))
    softmax(scores, lse, s, grid=bh * s, block=256)
    pv(scores, v, o, s, d, grid=(s, bh), block=d)
