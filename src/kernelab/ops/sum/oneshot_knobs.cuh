// oneshot_knobs.cuh: the knobs sum v3_oneshot, v5_pdl_finish and v6_ticket_chunks are built with,
// one set for the three (v6's chunk and v5's finish are v3's), with the defaults of a bare compile.
// op.py passes BLOCK and VECS from each variant's header (`@block`, `@vectors_per_thread`) and
// FINISH_BLOCK from `@finish_block`; X_LOAD is a sweep's: 0 ld.global.nc, 1 ld.global,
// 3 ld.global.nc.L1::no_allocate (the default: ~0.7% faster in fp32 and bf16, cold and in graph
// mode; docs/runs/2026-11-30-h200-sweep_membound_s4.json).
#pragma once

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VECS
#define VECS 8
#endif
#ifndef FINISH_BLOCK
#define FINISH_BLOCK 1024
#endif
#ifndef X_LOAD
#define X_LOAD 3
#endif
