"""Load a cubin and launch its kernels on torch tensors, on torch's current stream.

    mod = kernelab.gpu.load("my_kernel.cu")          # compile (cached) + load
    k = mod.kernel("vector_add_f32")
    k(a, b, c, a.numel(), grid=blocks, block=256)      # a, b, c are CUDA tensors

Launches go to `torch.cuda.current_stream()`, so they follow `torch.cuda.stream(s)` and are
recorded by `torch.cuda.graph(g)` capture. Arguments are converted by the kernel's C
signature (see params.py). A device fault surfaces at the next synchronisation; call
`kernelab.gpu.synchronize()` to get it as a KernelFault that names the kernel.
"""

from __future__ import annotations

import os
from pathlib import Path

from .compiler import CompiledModule, compile_file, compile_source
from .device import cc_device, has_gpu
from .errors import ArgumentError, KernelabError, KernelFault, LaunchError, NoGPUError, is_sticky_message
from .params import Param, make_converter, parse_signatures

DEFAULT_SMEM_LIMIT = 48 * 1024  # bytes a block may use before an opt-in attribute is needed

_state = {"last_kernel": None}
_LAUNCH_BLOCKING = os.environ.get("KERNELAB_LAUNCH_BLOCKING", "") not in ("", "0")


_streams: dict[int, object] = {}
_fns: dict = {}


def _launch_fn():
    """cuda.core's launch, imported once (an import statement per launch costs ~0.3 us)."""
    fn = _fns.get("launch")
    if fn is None:
        from cuda.core import launch

        fn = _fns["launch"] = launch
    return fn


def _raw_stream_fn():
    fn = _fns.get("raw_stream")
    if fn is None:
        import torch

        fn = _fns["raw_stream"] = torch._C._cuda_getCurrentRawStream
    return fn


def _cc_stream(stream, device_index: int):
    """cuda.core Stream for `stream`, default torch's current one on `device_index`.

    torch.cuda.current_stream() costs ~4.5 us and handing cuda.core a foreign stream another
    ~5 us (seen on the H200, 2026-11-30); the raw handle and a cached wrapper cost ~0.3 us.
    """
    if stream is None:
        handle = _raw_stream_fn()(device_index)
    elif hasattr(stream, "cuda_stream"):
        handle = stream.cuda_stream
    else:
        return stream  # already a cuda.core Stream (or a GraphBuilder)
    s = _streams.get(handle)
    if s is None:
        from cuda.core import Stream

        s = _streams[handle] = Stream.from_handle(handle)
    return s


def last_launched_kernel() -> str | None:
    return _state["last_kernel"]


def _raise_fault(e: BaseException):
    msg = str(e)
    if is_sticky_message(msg):
        raise KernelFault(_state["last_kernel"], msg) from None
    raise e


def synchronize() -> None:
    """torch.cuda.synchronize(), with a device fault turned into a KernelFault naming the kernel."""
    import torch

    try:
        torch.cuda.synchronize()
    except Exception as e:  # torch raises RuntimeError / torch.AcceleratorError
        _raise_fault(e)


def _dims(v, what: str) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int) else tuple(v)
    if not 1 <= len(t) <= 3 or not all(isinstance(x, int) for x in t):
        raise LaunchError(f"{what} must be an int or a tuple of 1-3 ints, got {v!r}")
    if any(x < 1 for x in t):
        raise LaunchError(f"{what} {t} has a zero or negative dimension; a launch needs at least one "
                          f"{'block' if what == 'grid' else 'thread'}. Skip the launch when there is no work (n == 0).")
    return t + (1,) * (3 - len(t))


class Kernel:
    """One `__global__` function of a loaded module, callable on torch tensors."""

    def __init__(self, module: "Module", name: str, params: list[Param], cc_kernel):
        self.module, self.name, self.params = module, name, params
        self._k = cc_kernel
        self._convert = [make_converter(name, p, module.device_index) for p in params]
        static = self.resources.shared_static if self.resources else 0
        # Without an opt-in, static + dynamic shared memory must fit in 48 KiB.
        self._smem_optin = DEFAULT_SMEM_LIMIT - static
        self._configs: dict = {}

    @property
    def resources(self):
        return self.module.compiled.resources.get(self.name)

    @property
    def attributes(self):
        """cuda.core KernelAttributes (num_regs, shared_size_bytes, local_size_bytes, ...)."""
        return self._k.attributes

    def max_active_blocks_per_sm(self, block: int, dynamic_smem: int = 0) -> int:
        self._ensure_smem(dynamic_smem)
        return self._k.occupancy.max_active_blocks_per_multiprocessor(block, dynamic_smem)

    def _ensure_smem(self, nbytes: int) -> None:
        if nbytes <= self._smem_optin:
            return
        from cuda.bindings import driver

        from .device import device_info

        limit = device_info(self.module.device_index).smem_per_block_optin
        static = self.resources.shared_static if self.resources else 0
        if nbytes + static > limit:
            raise LaunchError(f"{self.name}: asks for {nbytes} B dynamic + {static} B static shared memory; "
                              f"this GPU allows {limit} B per block. Fix: smaller tiles or fewer stages.")
        attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        handle = self._k.handle
        if isinstance(handle, driver.CUkernel):
            dev = driver.CUdevice(self.module.device_index)
            (err,) = driver.cuKernelSetAttribute(attr, limit - static, handle, dev)
        else:
            (err,) = driver.cuFuncSetAttribute(handle, attr, limit - static)
        if int(err) != 0:
            raise LaunchError(f"{self.name}: could not raise the dynamic shared-memory limit to {limit - static} B: {err}")
        self._smem_optin = limit - static

    def allow_cluster(self, cluster) -> None:
        """Clusters of more than 8 blocks (the portable limit; sm_90 allows 16) need the kernel's
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED set before a launch or an occupancy
        query with them; set once per kernel. Smaller clusters need nothing."""
        c = _dims(cluster, "cluster")
        if c[0] * c[1] * c[2] <= 8 or getattr(self, "_nonportable", False):
            return
        from cuda.bindings import driver

        attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
        handle = self._k.handle
        if isinstance(handle, driver.CUkernel):
            (err,) = driver.cuKernelSetAttribute(attr, 1, handle, driver.CUdevice(self.module.device_index))
        else:
            (err,) = driver.cuFuncSetAttribute(handle, attr, 1)
        if int(err) != 0:
            raise LaunchError(f"{self.name}: cluster {c} has more than 8 blocks, and allowing a non-portable "
                              f"cluster size was refused ({err}). Fix: use clusters of at most 8 blocks.")
        self._nonportable = True

    def convert_args(self, args) -> list:
        if len(args) != len(self.params):
            sig = ", ".join(p.ctype + " " + p.name for p in self.params)
            raise ArgumentError(f"{self.name}({sig}) takes {len(self.params)} arguments, got {len(args)}")
        return [conv(a) for conv, a in zip(self._convert, args)]

    def _config(self, grid, block, shared_mem, cluster, cooperative=False, pdl=False):
        """Validate a launch geometry once and build cuda.core's LaunchConfig for it.

        cooperative=True: a cooperative launch (every block of the grid resident at once, or the
        launch is refused), for kernels whose blocks wait for each other (softmax v9's groups).
        cuda.core then checks the grid against the occupancy API before each launch.
        pdl=True: programmatic dependent launch (sm_90+): this kernel may start before the previous
        kernel on the stream has finished, once every block of that kernel has run
        `griddepcontrol.launch_dependents` or exited; it must run `griddepcontrol.wait` before it
        reads what that kernel wrote (the wait returns when the previous grid has completed and its
        memory is visible). It hides the launch gap between two dependent kernels (sum v5)."""
        from cuda.core import LaunchConfig

        g, b = _dims(grid, "grid"), _dims(block, "block")
        if b[0] * b[1] * b[2] > 1024:
            raise LaunchError(f"{self.name}: block {b} has {b[0] * b[1] * b[2]} threads; the limit is 1024")
        self._ensure_smem(shared_mem)
        kw = dict(grid=g, block=b, shmem_size=shared_mem)
        if cluster is not None:
            kw["cluster"] = _dims(cluster, "cluster")
            self.allow_cluster(cluster)
        if cooperative:
            kw["is_cooperative"] = True  # only when asked: every other launch builds the config it always did
        if pdl:
            kw["programmatic_stream_serialization"] = True
        try:
            return LaunchConfig(**kw)
        except TypeError as e:
            if pdl and "programmatic" in str(e):
                raise LaunchError(f"{self.name}: a programmatic dependent launch (pdl=True) needs cuda-core >= 1.2 "
                                  f"(its LaunchConfig has no programmatic_stream_serialization here: {e}). Fix: "
                                  f"pip install -U cuda-core, or launch without pdl") from None
            raise

    def launch(self, grid, block, *args, shared_mem: int = 0, cluster=None, stream=None,
               cooperative: bool = False, pdl: bool = False) -> None:
        """Launch on `stream` (default: torch's current stream).

        With `cluster=`, `grid` counts clusters (cuda.core's LaunchConfig), so the kernel sees
        gridDim = grid * cluster. With `cooperative=True` all blocks are co-resident or the
        launch raises LaunchError (grid larger than SMs x the occupancy API's blocks per SM).
        With `pdl=True` a programmatic dependent launch (see _config)."""
        self(*args, grid=grid, block=block, shared_mem=shared_mem, cluster=cluster, stream=stream,
             cooperative=cooperative, pdl=pdl)

    def __call__(self, *args, grid, block, shared_mem: int = 0, cluster=None, stream=None,
                 cooperative: bool = False, pdl: bool = False) -> None:
        # The hot path: host launch overhead is a measured target (<= 1.2x torch.add), so it
        # holds no imports, no isinstance chains and one dict lookup for the geometry.
        key = (grid, block, shared_mem, cluster, cooperative, pdl)
        try:
            config = self._configs[key]
        except (KeyError, TypeError):  # TypeError: a list geometry is unhashable
            config = self._config(grid, block, shared_mem, cluster, cooperative, pdl)
            try:
                if len(self._configs) < 64:
                    self._configs[key] = config
            except TypeError:
                pass
        convert = self._convert
        if len(args) != len(convert):
            self.convert_args(args)  # raises the error that names the signature
        converted = [conv(a) for conv, a in zip(convert, args)]
        s = _cc_stream(stream, self.module.device_index)
        _state["last_kernel"] = self.name
        try:
            _launch_fn()(s, config, self._k, *converted)
        except Exception as e:
            if is_sticky_message(str(e)):
                raise KernelFault(self.name, str(e)) from None
            coop = (" cooperative" if cooperative else "") + (" programmatic (pdl)" if pdl else "")
            raise LaunchError(f"{self.name}:{coop} launch with grid={grid} block={block} shared_mem={shared_mem} "
                              f"was refused: {e}") from None
        if _LAUNCH_BLOCKING:
            import torch

            if not torch.cuda.is_current_stream_capturing():
                synchronize()

    def __repr__(self) -> str:
        sig = ", ".join(f"{p.ctype} {p.name}" for p in self.params)
        return f"<Kernel {self.name}({sig}) from {self.module.compiled.name} [{self.module.compiled.arch}]>"


def missing_kernel_error(compiled: CompiledModule, signatures: dict, name: str) -> KernelabError:
    """Why `name` cannot be called from `compiled`. kernelab reads a kernel's parameters from the source text
    (parse_signatures), so a kernel the compiler built from a definition the text does not spell out (a
    function-like macro that writes it) is in the cubin with no signature: say that, or that the name is there
    only C++-mangled (not extern "C"), rather than "no such function"."""
    known = ", ".join(sorted(signatures)) or "none"
    built = compiled.kernel_names()  # ptxas's per-kernel resource report: what the cubin holds
    if name in built:
        return KernelabError(
            f"{compiled.name}: kernel {name!r} is in the compiled module, but its signature is not in the source "
            f"text kernelab reads (signatures found: {known}): a kernel defined through a function-like macro "
            f"compiles but cannot be read. Fix: write its `extern \"C\" __global__ void {name}(...)` line out in "
            f"the source (the body may still call a template or a macro).")
    if any(k.startswith(f"_Z{len(name)}{name}") for k in built):
        return KernelabError(
            f"{compiled.name}: kernel {name!r} is compiled with a C++-mangled name (signatures found: {known}). "
            f"Fix: declare it extern \"C\" (a template kernel: launch it through an extern \"C\" wrapper).")
    return KernelabError(f"{compiled.name} has no __global__ function {name!r} that kernelab can call (found: "
                         f"{known}). Kernels must be extern \"C\" and not templates.")


class Module:
    """A compiled module loaded on the current GPU."""

    def __init__(self, compiled: CompiledModule, defines: dict | None = None):
        if not has_gpu():
            raise NoGPUError(f"loading {compiled.name}")
        import torch
        from cuda.core import ObjectCode

        self.compiled = compiled
        self.device_index = torch.cuda.current_device()
        cc_device(self.device_index)
        try:
            self._obj = ObjectCode.from_cubin(compiled.cubin, name=Path(compiled.name).name)
        except Exception as e:
            raise KernelabError(f"could not load {compiled.name} ({compiled.arch}) on this GPU: {e}") from None
        self.signatures = parse_signatures(compiled.source, defines, compiled.include_dirs)
        self._kernels: dict[str, Kernel] = {}

    def kernel(self, name: str) -> Kernel:
        if name in self._kernels:
            return self._kernels[name]
        if name not in self.signatures:
            raise missing_kernel_error(self.compiled, self.signatures, name)
        try:
            k = self._obj.get_kernel(name)
        except Exception as e:
            msg = str(e)
            if "NO_BINARY_FOR_GPU" in msg or "no kernel image" in msg.lower():
                raise KernelabError(f"{self.compiled.name} was built for {self.compiled.arch}, which this GPU cannot "
                                    f"run (no kernel image). Fix: compile for the current GPU (arch=None).") from None
            raise KernelabError(f"{self.compiled.name}: cannot get kernel {name!r}: {msg}. Is it extern \"C\"?") from None
        self._kernels[name] = Kernel(self, name, self.signatures[name], k)
        return self._kernels[name]

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_") or name in ("compiled", "device_index", "signatures"):
            raise AttributeError(name)
        return self.kernel(name)

    def kernel_names(self) -> list[str]:
        return sorted(self.signatures)


def load(source_or_path: str | Path, *, arch=None, compiler: str = "nvrtc", defines: dict | None = None,
         include_dirs=(), extra_options=(), max_registers: int | None = None, use_cache: bool = True) -> Module:
    """Compile (through the cache) and load a .cu file or a CUDA source string on the current GPU."""
    text = str(source_or_path)
    is_path = isinstance(source_or_path, Path) or (("\n" not in text) and text.endswith((".cu", ".cuh")))
    kw = dict(arch=arch, compiler=compiler, defines=defines, include_dirs=include_dirs,
              extra_options=extra_options, max_registers=max_registers, use_cache=use_cache)
    compiled = compile_file(text, **kw) if is_path else compile_source(text, **kw)
    return Module(compiled, defines)
