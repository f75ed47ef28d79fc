import math

import torch


def launch(op, kernel, variant, case, inputs, outputs):
    n = case.numel
    if n == 0:
        return
    from kernelab.gpu import device_info

    block = 256
    elems = 16 // inputs["a"].element_size()
    resident = device_info().sm_count * kernel.max_active_blocks_per_sm(block)
    grid = min(resident, math.ceil(n / (block * elems)))
    counter = torch.zeros(1, dtype=torch.int64, device=inputs["a"].device)
    kernel(inputs["a"], inputs["b"], outputs["c"], n, counter, grid=grid, block=block)
