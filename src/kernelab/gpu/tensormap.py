"""TMA tensor maps (CUtensorMap) for Hopper kernels, and the launch that passes them by value.

A kernel that loads tiles with the tensor-memory accelerator (`cp.async.bulk.tensor`) takes
its 128-byte descriptor as a by-value parameter:

    struct alignas(64) CUtensorMap { unsigned long long opaque[16]; };   // cuda.h's layout
    extern "C" __global__ void k(const __grid_constant__ CUtensorMap tmap, float* out, int n);

and the host side is

    from kernelab.gpu import tensormap
    tm = tensormap.tensor_map_2d(x, box_rows=128, box_cols=64, swizzle=128)   # x: 2-D CUDA tensor
    tm = tensormap.tensor_map_3d(x, box_rows=128, box_cols=64)   # x: [planes, rows, cols]; box 1 plane deep
    tensormap.launch(kernel, grid, block, tm, out, n, shared_mem=...)

How, and why this route (each step is the one DeepGEMM's Python runtime uses in production):
- Encoding: `cuda.bindings.driver.cuTensorMapEncodeTiled`, the driver's own encoder, whose
  contract is short and documented (16-byte aligned base, row stride a multiple of 16 bytes,
  box sides 1..256, inner box side a multiple of 16 bytes and within the swizzle span). A box
  may be larger than the tensor: what falls outside reads as zeros, which is how a 128-row
  tile loads a 1-row matrix (M = 1). cuda.core's TensorMapDescriptor was not used: 1.2.x
  builds it through CCCL's make_tma_descriptor when CCCL was present at its build, and that
  validation (as read in CCCL's source) refuses a box larger than the tensor (M = 1, K < 64).
- Passing: a `__grid_constant__` parameter is copied with the launch (so a CUDA graph records
  it, and there is no device buffer to keep alive or fence); cuda.core's launch cannot pass a
  128-byte struct it did not create, so `launch` below calls cuLaunchKernelEx through
  cuda.bindings with the (values, types) argument form, where type None means "copy the
  object at getPtr()": the CUtensorMap's 128 bytes.

Everything else in `launch` matches Kernel.launch: torch's current stream, the dynamic
shared-memory opt-in, clusters, the same errors.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentError, KernelFault, LaunchError, is_sticky_message

# Element types a tensor map can describe here: dtype name -> (driver enum name, bytes).
DTYPES = {
    "bfloat16": ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 2),
    "float16": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 2),
    "float32": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT32", 4),
    "int16": ("CU_TENSOR_MAP_DATA_TYPE_UINT16", 2),  # raw 16-bit payloads (tests move bit patterns)
    "uint8": ("CU_TENSOR_MAP_DATA_TYPE_UINT8", 1),
}
# Swizzle span in bytes -> driver enum name. 0 = rows land in shared memory as they are.
SWIZZLES = {
    0: "CU_TENSOR_MAP_SWIZZLE_NONE",
    32: "CU_TENSOR_MAP_SWIZZLE_32B",
    64: "CU_TENSOR_MAP_SWIZZLE_64B",
    128: "CU_TENSOR_MAP_SWIZZLE_128B",
}
MAX_BOX = 256  # elements per box side (driver limit)


@dataclass(frozen=True)
class TensorMapSpec:
    """Everything a 2-D (or 3-D) tiled tensor map encodes. Rows are the outer dimension of a
    plane, columns the contiguous one; the box is what one `cp.async.bulk.tensor.2d` moves. With
    `planes` > 0 the map is 3-D, [planes][rows][cols] with `plane_stride` elements between planes,
    and the box is one plane deep (`cp.async.bulk.tensor.3d`): rows past `rows` read as zeros
    inside each plane, which is what a per-head bound needs (attention's [B*H][S][D])."""

    address: int
    rows: int
    cols: int
    row_stride: int  # elements between the starts of consecutive rows
    dtype: str
    box_rows: int
    box_cols: int
    swizzle: int = 128  # bytes: 0, 32, 64 or 128
    planes: int = 0  # 0: a 2-D map; > 0: a 3-D map with this many planes
    plane_stride: int = 0  # elements between the starts of consecutive planes (3-D only)

    @property
    def rank(self) -> int:
        return 3 if self.planes else 2

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype][1]

    @property
    def box_bytes(self) -> int:
        """Bytes one load writes to shared memory (and counts on its mbarrier), OOB fill included."""
        return self.box_rows * self.box_cols * self.itemsize

    def problems(self) -> list[str]:
        """Why the driver would refuse this map (each with its fix); empty when it is valid."""
        out = []
        if self.dtype not in DTYPES:
            return [f"dtype {self.dtype} has no tensor-map element type here (have: {', '.join(DTYPES)})"]
        if self.swizzle not in SWIZZLES:
            out.append(f"swizzle {self.swizzle} is not one of {sorted(SWIZZLES)} bytes")
        if self.address % 16:
            out.append(f"base address {self.address:#x} is not 16-byte aligned (address % 16 == {self.address % 16}); "
                       "TMA needs it. Fix: pass a fresh tensor (.clone()) instead of an offset view")
        if not (1 <= self.rows <= 1 << 32 and 1 <= self.cols <= 1 << 32):
            out.append(f"shape {self.rows}x{self.cols} is empty or over 2^32 on a side")
        stride_bytes = max(self.row_stride, self.cols) * self.itemsize
        if stride_bytes % 16:
            out.append(f"row stride {self.row_stride} elements = {stride_bytes} bytes is not a multiple of 16; TMA "
                       f"needs 16-byte row strides (for {self.itemsize}-byte elements: a multiple of {16 // self.itemsize} "
                       "elements)")
        if self.rows > 1 and self.row_stride < self.cols:
            out.append(f"row stride {self.row_stride} is shorter than a row ({self.cols} elements): rows would overlap")
        if stride_bytes >= 1 << 40:
            out.append(f"row stride {stride_bytes} bytes is over the 2^40 limit")
        if self.planes:
            plane_bytes = self.plane_stride * self.itemsize
            if not 1 <= self.planes <= 1 << 32:
                out.append(f"{self.planes} planes is outside 1..2^32")
            if self.planes > 1 and plane_bytes % 16:
                out.append(f"plane stride {self.plane_stride} elements = {plane_bytes} bytes is not a multiple of 16")
            if self.planes > 1 and self.plane_stride < self.rows * max(self.row_stride, self.cols):
                out.append(f"plane stride {self.plane_stride} is shorter than a plane ({self.rows} rows): planes would overlap")
            if plane_bytes >= 1 << 40:
                out.append(f"plane stride {plane_bytes} bytes is over the 2^40 limit")
        for side, v in (("box_rows", self.box_rows), ("box_cols", self.box_cols)):
            if not 1 <= v <= MAX_BOX:
                out.append(f"{side} = {v} is outside 1..{MAX_BOX}")
        inner = self.box_cols * self.itemsize
        if inner % 16:
            out.append(f"the box's inner side is {inner} bytes, not a multiple of 16")
        if self.swizzle and inner > self.swizzle:
            out.append(f"the box's inner side ({inner} bytes) is wider than the {self.swizzle}-byte swizzle span; "
                       f"use box_cols <= {self.swizzle // self.itemsize}")
        return out


def spec_for(t, box_rows: int, box_cols: int, swizzle: int = 128) -> TensorMapSpec:
    """The TensorMapSpec of a 2-D tensor `t` (any device: nothing is encoded here)."""
    if t.dim() != 2:
        raise ArgumentError(f"tensor_map_2d needs a 2-D tensor, got shape {tuple(t.shape)}. Fix: .view(rows, cols)")
    if t.shape[1] > 1 and t.stride(1) != 1:
        raise ArgumentError(f"tensor_map_2d needs contiguous rows (stride(1) == 1), got strides {tuple(t.stride())}. "
                            "Fix: .contiguous()")
    dtype = str(t.dtype).replace("torch.", "")
    if dtype not in DTYPES:
        raise ArgumentError(f"no tensor-map element type for {t.dtype} (have: {', '.join(DTYPES)})")
    return TensorMapSpec(address=t.data_ptr(), rows=int(t.shape[0]), cols=int(t.shape[1]),
                         row_stride=int(t.stride(0)) if t.shape[0] > 1 else int(t.shape[1]),
                         dtype=dtype, box_rows=int(box_rows), box_cols=int(box_cols), swizzle=int(swizzle))


class TensorMap:
    """An encoded CUtensorMap: `handle` is cuda.bindings' CUtensorMap, `spec` what it encodes."""

    _kernelab_tensor_map = True  # params.py recognises it and points Kernel.launch users here

    def __init__(self, spec: TensorMapSpec, handle):
        self.spec, self.handle = spec, handle

    @property
    def box_bytes(self) -> int:
        return self.spec.box_bytes

    def __repr__(self) -> str:
        s = self.spec
        return (f"<TensorMap {s.rows}x{s.cols} {s.dtype} @ {s.address:#x}, box {s.box_rows}x{s.box_cols}, "
                f"swizzle {s.swizzle}B>")


_cache: "OrderedDict[TensorMapSpec, TensorMap]" = OrderedDict()
_CACHE_SIZE = 512  # encoded maps are host memory only (128 B each): evicting one is always safe


def encode(spec: TensorMapSpec) -> TensorMap:
    """Encode `spec` with the driver (cached by value: same address, shape and box, same map)."""
    hit = _cache.get(spec)
    if hit is not None:
        _cache.move_to_end(spec)
        return hit
    bad = spec.problems()
    if bad:
        raise ArgumentError("cannot build a TMA tensor map: " + "; ".join(bad))
    from cuda.bindings import driver

    dtype_enum = getattr(driver.CUtensorMapDataType, DTYPES[spec.dtype][0])
    swizzle_enum = getattr(driver.CUtensorMapSwizzle, SWIZZLES[spec.swizzle])
    # The driver lists dimensions innermost first: (cols, rows[, planes]); strides for dims 1.. in bytes.
    stride_bytes = max(spec.row_stride, spec.cols) * spec.itemsize
    dims, strides, box = [spec.cols, spec.rows], [stride_bytes], [spec.box_cols, spec.box_rows]
    if spec.planes:
        dims.append(spec.planes)
        strides.append(max(spec.plane_stride, spec.rows * max(spec.row_stride, spec.cols)) * spec.itemsize)
        box.append(1)
    err, handle = driver.cuTensorMapEncodeTiled(
        dtype_enum, spec.rank, spec.address,
        [driver.cuuint64_t(x) for x in dims],
        [driver.cuuint64_t(x) for x in strides],
        [driver.cuuint32_t(x) for x in box],
        [driver.cuuint32_t(1)] * spec.rank,
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        swizzle_enum,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,  # out of bounds reads as zeros
    )
    if int(err) != 0:
        raise ArgumentError(f"cuTensorMapEncodeTiled refused {spec}: {_err_name(err)}")
    tm = TensorMap(spec, handle)
    _cache[spec] = tm
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return tm


def tensor_map_2d(t, box_rows: int, box_cols: int, swizzle: int = 128) -> TensorMap:
    """A tiled tensor map over the 2-D CUDA tensor `t`, moving `box_rows` x `box_cols` boxes.

    The map holds `t`'s address, not a reference: keep `t` alive while kernels use the map.
    """
    if not getattr(t, "is_cuda", False):
        raise ArgumentError(f"tensor_map_2d needs a CUDA tensor, got one on {getattr(t, 'device', type(t).__name__)}")
    return encode(spec_for(t, box_rows, box_cols, swizzle))


def tensor_map_3d(t, box_rows: int, box_cols: int, swizzle: int = 128) -> TensorMap:
    """A 3-D tiled tensor map over the CUDA tensor `t` viewed as [planes, rows, cols] (a 4-D
    [B, H, S, D] tensor counts as [B*H, S, D] when its first two dimensions merge), moving boxes of
    `box_rows` x `box_cols` one plane deep. Rows past a plane's end read as zeros.

    The map holds `t`'s address, not a reference: keep `t` alive while kernels use the map.
    """
    if not getattr(t, "is_cuda", False):
        raise ArgumentError(f"tensor_map_3d needs a CUDA tensor, got one on {getattr(t, 'device', type(t).__name__)}")
    if t.numel() == 0:
        raise ArgumentError(f"tensor_map_3d needs a non-empty tensor, got shape {tuple(t.shape)}: skip the launch instead")
    if t.dim() == 4:
        if t.shape[1] > 1 and t.shape[0] > 1 and t.stride(0) != t.shape[1] * t.stride(1):
            raise ArgumentError(f"tensor_map_3d: the first two dimensions of shape {tuple(t.shape)} (strides "
                                f"{tuple(t.stride())}) do not merge into one. Fix: .contiguous()")
        t = t.flatten(0, 1)
    if t.dim() != 3:
        raise ArgumentError(f"tensor_map_3d needs a 3-D (or 4-D) tensor, got shape {tuple(t.shape)}")
    plane = spec_for(t[0], box_rows, box_cols, swizzle)
    plane_stride = int(t.stride(0)) if t.shape[0] > 1 else plane.rows * max(plane.row_stride, plane.cols)
    return encode(dataclasses.replace(plane, address=t.data_ptr(), planes=int(t.shape[0]), plane_stride=plane_stride))


# ---- launch ---------------------------------------------------------------------------

_CTYPES = {
    np.bool_: ctypes.c_bool, np.int8: ctypes.c_int8, np.uint8: ctypes.c_uint8,
    np.int16: ctypes.c_int16, np.uint16: ctypes.c_uint16, np.int32: ctypes.c_int32,
    np.uint32: ctypes.c_uint32, np.int64: ctypes.c_int64, np.uint64: ctypes.c_uint64,
    np.float32: ctypes.c_float, np.float64: ctypes.c_double,
}


def pack_args(kernel_name: str, params, converters, args) -> tuple[tuple, tuple]:
    """(values, types) for cuLaunchKernelEx: pointers as c_void_p, scalars as the ctypes type of
    their declared width, tensor maps as (CUtensorMap, None) so their 128 bytes are copied."""
    if len(args) != len(params):
        sig = ", ".join(p.ctype + " " + p.name for p in params)
        raise ArgumentError(f"{kernel_name}({sig}) takes {len(params)} arguments, got {len(args)}")
    values, types = [], []
    for p, conv, v in zip(params, converters, args):
        if p.kind == "struct":
            if not isinstance(v, TensorMap):
                raise ArgumentError(f"{kernel_name}: {p.describe()} takes a kernelab.gpu.tensormap.TensorMap "
                                    f"(tensormap.tensor_map_2d(...)), got {type(v).__name__}")
            values.append(v.handle)
            types.append(None)
        elif p.kind == "pointer":
            values.append(conv(v))  # the checked address (dtype, device, alignment: params.py)
            types.append(ctypes.c_void_p)
        else:
            x = conv(v)  # a numpy scalar of the parameter's exact width
            ct = _CTYPES.get(type(x))
            if ct is None:
                raise ArgumentError(f"{kernel_name}: {p.describe()} has a type tensormap.launch cannot pass yet "
                                    f"({type(x).__name__}); use an integer or float32/float64 parameter")
            values.append(x.item())
            types.append(ct)
    return tuple(values), tuple(types)


def _err_name(err) -> str:
    try:
        from cuda.bindings import driver

        _, name = driver.cuGetErrorName(err)
        _, text = driver.cuGetErrorString(err)
        return f"{name.decode() if isinstance(name, bytes) else name}: {text.decode() if isinstance(text, bytes) else text}"
    except Exception:
        return str(err)


def _stream_handle(stream, device_index: int) -> int:
    if stream is None:
        import torch

        return int(torch._C._cuda_getCurrentRawStream(device_index))
    if hasattr(stream, "cuda_stream"):
        return int(stream.cuda_stream)
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "handle"):
        return int(stream.handle)
    raise ArgumentError(f"stream must be a torch.cuda.Stream, a raw handle or None, got {type(stream).__name__}")


def _config(driver, grid, block, shared_mem: int, cluster, stream_handle: int):
    from . import module as _m

    g, b = _m._dims(grid, "grid"), _m._dims(block, "block")
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = g
    config.blockDimX, config.blockDimY, config.blockDimZ = b
    config.sharedMemBytes = int(shared_mem)
    config.hStream = driver.CUstream(stream_handle)
    if cluster is not None:
        cx, cy, cz = _m._dims(cluster, "cluster")
        value = driver.CUlaunchAttributeValue()
        value.clusterDim.x, value.clusterDim.y, value.clusterDim.z = cx, cy, cz
        attr = driver.CUlaunchAttribute()
        attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value = value
        config.attrs = [attr]
        config.numAttrs = 1
    else:
        config.numAttrs = 0
    return config


_functions: dict = {}
_configs: dict = {}


def _function(driver, kernel):
    """cuda.core's handle is a CUkernel (library-loaded, context-independent); the driver takes it
    wherever a CUfunction is expected and resolves it in the current (torch's primary) context."""
    f = _functions.get(id(kernel))
    if f is None or f[0] is not kernel:
        f = _functions[id(kernel)] = (kernel, driver.CUfunction(int(kernel._k.handle)))
    return f[1]


_clusters: dict = {}


def max_active_clusters(kernel, block, cluster, shared_mem: int = 0) -> int | None:
    """How many clusters of `kernel` fit on the GPU at once (cuOccupancyMaxActiveClusters), or
    None if the driver cannot say. A persistent cluster kernel launches that many: one more
    would run as a second wave. Cached per kernel and configuration."""
    from cuda.bindings import driver

    from . import module as _m

    key = (kernel.name, id(kernel.module), _m._dims(block, "block"), _m._dims(cluster, "cluster"), int(shared_mem))
    if key not in _clusters:
        kernel._ensure_smem(shared_mem)
        kernel.allow_cluster(cluster)  # clusters of more than 8 blocks: the query needs it too
        handle = kernel._k.handle
        func = _function(driver, kernel)
        if isinstance(handle, driver.CUkernel):
            err, f = driver.cuKernelGetFunction(handle)
            if int(err) == 0:
                func = f
        config = _config(driver, _m._dims(cluster, "cluster"), block, shared_mem, cluster, 0)
        err, n = driver.cuOccupancyMaxActiveClusters(func, config)
        _clusters[key] = int(n) if int(err) == 0 and int(n) > 0 else None
    return _clusters[key]


def launch(kernel, grid, block, *args, shared_mem: int = 0, cluster=None, stream=None) -> None:
    """Launch `kernel` (a kernelab Kernel) whose parameters include CUtensorMaps, on torch's
    current stream (or `stream`). Arguments follow the kernel's C signature, as in Kernel.launch."""
    import torch
    from cuda.bindings import driver

    from . import module as _m

    values, types = pack_args(kernel.name, kernel.params, kernel._convert, args)
    b = _m._dims(block, "block")
    if b[0] * b[1] * b[2] > 1024:
        raise LaunchError(f"{kernel.name}: block {b} has {b[0] * b[1] * b[2]} threads; the limit is 1024")
    kernel._ensure_smem(shared_mem)
    handle = _stream_handle(stream, kernel.module.device_index)
    key = (_m._dims(grid, "grid"), b, int(shared_mem), None if cluster is None else _m._dims(cluster, "cluster"), handle)
    config = _configs.get(key)
    if config is None:  # building one costs ~20 Python attribute writes; launches repeat configs
        if cluster is not None:
            kernel.allow_cluster(cluster)
        config = _config(driver, grid, block, shared_mem, cluster, handle)
        if len(_configs) < 256:
            _configs[key] = config

    _m._state["last_kernel"] = kernel.name
    (err,) = driver.cuLaunchKernelEx(config, _function(driver, kernel), (values, types), 0)
    if int(err) != 0:
        msg = _err_name(err)
        if is_sticky_message(msg):
            raise KernelFault(kernel.name, msg)
        raise LaunchError(f"{kernel.name}: launch with grid={grid} block={block} shared_mem={shared_mem} "
                          f"cluster={cluster} was refused: {msg}")
    if _m._LAUNCH_BLOCKING and not torch.cuda.is_current_stream_capturing():
        _m.synchronize()
