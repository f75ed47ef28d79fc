"""What can be known without timing, and how a result compares with the hardware's limits.

    from kernelab.analysis import occupancy, what_if, sass_mix, list_fatbin, will_it_run
    from kernelab.analysis import spec_for, floor_seconds, place, plot_roofline, get_ceilings

    occupancy("9.0", threads=256, regs_per_thread=40, smem_per_block=64 * 1024)
        -> 3 blocks/SM, 24/64 warps (37.5%), limited by shared memory
    sass_mix(compiled.cubin)["vector_add_f32"].ldg128          # 16-byte loads in the code
    will_it_run(list_fatbin("app"), "H100 SXM")                 # sass / jit / none, and why
    floor_seconds(op.work(case), spec_for())                    # max(bytes/BW, FLOPs/peak)

Modules: occupancy (the CUDA occupancy calculator), sass (cuobjdump: instruction mix,
fatbin contents), load_order (a stream's first load issued after a wait it does not
need), compat (will it run on GPU X), devices (nominal peaks), roofline (floors,
% of ceiling), ceilings (measured peaks, cached), plot (roofline PNG/SVG), inspect (all of
it per kernel of a compiled module).
"""

from .ceilings import CeilingEntry, MeasuredCeilings, get_ceilings, load_cached, measure_ceilings, roofline_ceilings
from .compat import Verdict, compatibility_table, will_it_run
from .devices import DEFAULT_DEVICE, DEVICES, DeviceSpec, lookup, spec_for
from .errors import AnalysisError
from .inspect import KernelReport, inspect_module
from .load_order import LoadOrder, SerializedLoad, load_order
from .occupancy import ARCH_LIMITS, ArchLimits, Occupancy, WhatIf, limits_for, limits_from_device, occupancy, \
    occupancy_for_kernel, what_if
from .plot import plot_roofline
from .roofline import Bound, Ceilings, Placement, arithmetic_intensity, floor_seconds, nominal_ceilings, \
    percent_of_ceiling, place, ridge_point
from .sass import FatbinEntry, FatbinListing, InstructionMix, SassFunction, disassemble, list_fatbin, parse_sass, \
    sass_mix

__all__ = [
    "AnalysisError",
    # occupancy
    "ARCH_LIMITS", "ArchLimits", "Occupancy", "WhatIf", "limits_for", "limits_from_device", "occupancy",
    "occupancy_for_kernel", "what_if",
    # SASS and binaries
    "FatbinEntry", "FatbinListing", "InstructionMix", "SassFunction", "disassemble", "list_fatbin", "parse_sass",
    "sass_mix", "LoadOrder", "SerializedLoad", "load_order", "Verdict", "compatibility_table", "will_it_run",
    # devices and roofline
    "DEFAULT_DEVICE", "DEVICES", "DeviceSpec", "lookup", "spec_for",
    "Bound", "Ceilings", "Placement", "arithmetic_intensity", "floor_seconds", "nominal_ceilings",
    "percent_of_ceiling", "place", "ridge_point", "plot_roofline",
    # measured ceilings
    "CeilingEntry", "MeasuredCeilings", "get_ceilings", "load_cached", "measure_ceilings", "roofline_ceilings",
    # per-kernel report
    "KernelReport", "inspect_module",
]
