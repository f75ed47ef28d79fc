"""Compile, load and launch an op's variants. The suite, the checker and the torch operators
all go through here, so a variant is built the same way everywhere."""

from __future__ import annotations

from ..gpu import Arch, CompiledModule, compile_file
from ..gpu.module import Module
from .base import Case, OpSpec, Variant

_loaded: dict[tuple, Module] = {}


def target_arch(variant: Variant, arch=None) -> Arch:
    """The arch to build `variant` for: its `@arch` if it has one (e.g. sm_90a), else `arch`/the GPU's."""
    from ..gpu import default_arch

    if variant.min_arch:
        want = Arch.parse(variant.min_arch)
        base = Arch.parse(arch) if arch is not None else default_arch()
        # An arch-specific (`a`) target is only valid on exactly that GPU generation.
        if want.suffix == "a":
            if base.cc != want.cc:
                raise ValueError(f"{variant.id} is built for {want.sm} only; {base.sm} cannot run it")
            return want
        # `@arch sm_90` is a minimum (clusters need 9.0): build for the newer GPU when there is one,
        # since an sm_90 cubin does not load on an sm_100 GPU (SASS runs forward only within a major).
        return max(want, base)
    return Arch.parse(arch) if arch is not None else default_arch()


def compile_variant(op: OpSpec, variant: Variant, arch=None, compiler: str = "nvrtc", use_cache: bool = True) -> CompiledModule:
    return compile_file(variant.path, arch=target_arch(variant, arch), compiler=compiler,
                        defines=op.defines(variant), use_cache=use_cache)


def load_variant(op: OpSpec, variant: Variant) -> Module:
    """The loaded module of `variant` on the current device, built once per (file, device, defines):
    a variant whose header values change its macros (`dataclasses.replace(v, meta=...)`, or v4_dispatch
    after its tables change) gets its own build, not the first one loaded (~2 us a call for the key)."""
    import torch

    defines = op.defines(variant)
    key = (str(variant.path), torch.cuda.current_device(), tuple(sorted(defines.items())))
    mod = _loaded.get(key)
    if mod is None:
        mod = Module(compile_variant(op, variant), defines)
        _loaded[key] = mod
    return mod


def launch_variant(op: OpSpec, kernel, variant: Variant, case: Case, inputs: dict, outputs: dict) -> None:
    """Launch `variant` from its contract `kernel`: its own launcher (vN_name.py) if it ships one,
    else the op's launch. Sweeps and CPU tests pass a kernel of their own (a stand-in) here."""
    if variant.launcher is not None:
        variant.launcher(op, kernel, variant, case, inputs, outputs)
    else:
        op.launch(kernel, variant, case, inputs, outputs)


def run_variant(op: OpSpec, variant: Variant, case: Case, inputs: dict, outputs: dict) -> None:
    """Launch `variant` on `case`, writing into `outputs` on torch's current stream."""
    launch_variant(op, load_variant(op, variant).kernel(op.kernel_name(case.dtype)), variant, case, inputs, outputs)
