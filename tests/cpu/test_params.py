"""Scalar conversion and every argument error message, on CPU tensors (no GPU needed)."""

import numpy as np
import pytest
import torch

from kernelab.gpu import ArgumentError, DevicePointer, parse_signatures
from kernelab.gpu.params import make_converter

SIG = parse_signatures(
    'extern "C" __global__ void k(const float* a, float4* v, unsigned long long n, int k, float alpha, bool flag, void* any) {}'
)["k"]
CONV = {p.name: make_converter("k", p) for p in SIG}


class FakeCuda:
    """Stands in for a CUDA tensor: the converter only reads these attributes."""

    def __init__(self, dtype=torch.float32, ptr=256, contiguous=True, numel=8, device="cuda:0"):
        self.dtype, self._ptr, self._c, self._n = dtype, ptr, contiguous, numel
        self.device = torch.device(device)

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return self._c

    def numel(self):
        return self._n

    def stride(self):
        return (2,)


def test_scalars_become_exact_c_types():
    assert CONV["n"](5).dtype == np.uint64 and CONV["n"](5) == 5
    assert CONV["k"](-3).dtype == np.int32
    assert CONV["alpha"](0.5).dtype == np.float32 and CONV["alpha"](2).dtype == np.float32
    assert CONV["flag"](True).dtype == np.bool_


def test_int_out_of_range_is_refused():
    with pytest.raises(ArgumentError, match=r"does not fit in int"):
        CONV["k"](2**31)
    with pytest.raises(ArgumentError, match=r"does not fit in unsigned long long"):
        CONV["n"](-1)


def test_float_for_int_and_wrong_numpy_type():
    with pytest.raises(ArgumentError, match=r"Fix: pass int\(4.0\)"):
        CONV["n"](4.0)
    with pytest.raises(ArgumentError, match="numpy int32.*unsigned long long"):
        CONV["n"](np.int32(4))
    with pytest.raises(ArgumentError, match="expected a number"):
        CONV["alpha"]("1.0")


def test_bare_int_is_never_a_pointer():
    with pytest.raises(ArgumentError, match="A Python int is not a pointer"):
        CONV["a"](0x7F0000000000)
    assert CONV["a"](DevicePointer(0x1000)) == 0x1000
    with pytest.raises(ArgumentError, match="16-byte aligned"):
        CONV["v"](DevicePointer(0x1004))


def test_tensor_checks_name_argument_and_fix():
    with pytest.raises(ArgumentError, match=r"param 0 'a'.*is on cpu.*a\.cuda\(\)"):
        CONV["a"](torch.zeros(4))
    with pytest.raises(ArgumentError, match=r"'a'.*dtype torch.bfloat16.*expects torch.float32"):
        CONV["a"](FakeCuda(dtype=torch.bfloat16))
    with pytest.raises(ArgumentError, match=r"not contiguous.*a\.contiguous\(\)"):
        CONV["a"](FakeCuda(contiguous=False))
    with pytest.raises(ArgumentError, match=r"'v'.*not 16-byte aligned.*ptr % 16 == 4"):
        CONV["v"](FakeCuda(ptr=0x1004))
    with pytest.raises(ArgumentError, match="got a tensor for a scalar"):
        CONV["n"](FakeCuda())
    assert CONV["a"](FakeCuda(ptr=0x1004)) == 0x1004  # float* needs only 4-byte alignment
    assert CONV["any"](FakeCuda(dtype=torch.int8, ptr=0x1001)) == 0x1001  # void* takes any dtype


def test_wrong_device_index_is_named():
    conv = make_converter("k", SIG[0], device_index=0)
    with pytest.raises(ArgumentError, match="cuda:1.*loaded on cuda:0"):
        conv(FakeCuda(device="cuda:1"))
