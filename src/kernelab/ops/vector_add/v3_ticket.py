"""vector_add v3: a persistent grid plus the chunk counter the ticket kernel needs (zeroed per launch)."""

import math

import torch


def launch(op, kernel, variant, case, inputs, outputs):
    n = case.numel
    if n == 0:
        return
    from kernelab.ops.base import resident_blocks

    block = variant.meta_int("block", 256)
    elems = variant.meta_int("bytes_per_thread", 16) // inputs["a"].element_size()
    grid = min(resident_blocks(kernel, block), math.ceil(n / (block * elems)))
    counter = torch.zeros(1, dtype=torch.int64, device=inputs["a"].device)
    kernel(inputs["a"], inputs["b"], outputs["c"], n, counter, grid=grid, block=block)
