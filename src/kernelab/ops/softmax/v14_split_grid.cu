// v14_split_grid: v12's clusters and v13's clusters at once, as two grids on two streams that take
// rows from ONE counter: v12's clusters of 8 fill 120 of the H200's 132 SMs, and v13's clusters of
// 2 (1024-thread blocks) fill the 12 SMs left over. Rows of 2049 .. 262144 elements, sm_90+.
//
// What changed from v12_dynamic_rows (v4_dispatch's pick for the widest rows) and v13_packed_regs:
//   no new row body. (1) The main grid is v12's (the instance v4 picks: 256-thread blocks, two an
//   SM, clusters of 8-16) launched on the caller's stream; the side grid is v13's (one 1024-thread
//   block an SM, clusters of 2-8) launched right after it on a second stream forked from and joined
//   back to the caller's, sized to the SMs the main grid leaves idle (op.py's split_grids: SMs less
//   the main grid's clusters x C / its blocks an SM, in clusters of the side's C). (2) Both take
//   rows from the same `work` counter, so each row goes to whichever cluster is free first, and the
//   last of both grids' clusters resets it (`clusters`, their total, replaces gridDim.x / C).
//   (3) The side grid stops taking rows once a take returns an index >= `stop` = M - `@side_margin`
//   (the row it got is still done): its rows take ~2.3x a main cluster's (9.3 vs 4.0 us at 2048 x
//   131072 bf16) and it holds two taken rows ahead, so the last rows are left to the main grid, whose
//   tail is v12's.
// Why: v12 runs 2048 x 131072 bf16 at 276 us = 0.91x a copy, on 120 SMs: 120 / 132 = 0.91. Its
//   ablation (session 12) says a row's chain is what each SM waits on, not DRAM (3.9 of ~4.25 TB/s),
//   so the 12 idle SMs are bandwidth nobody asks for. v13 alone fills all 132 SMs but its rows take
//   2.3x as long an SM (one block an SM: nothing covers a row's chain), 289.6 us.
// Predicted: bytes first: 2048 x 131072 bf16 moves 1.074 GB, 251 us at the ~4.27 TB/s copy rate.
//   Rows an us: main 30 clusters / 4.04 us = 7.43, side 6 clusters / 9.33 us = 0.64: 8.07 together,
//   2048 rows in 254 us if DRAM carries it (4.23 TB/s: at the copy rate, so it will not fully);
//   the side grid stops ~margin / 7.4 us early. Expect 258-266 us (0.95-0.97x a copy, 3-7% over
//   v12); no gain if the side grid's clusters cannot be placed beside the main grid's (they then
//   run after it, find no rows and exit: correct, ~v12's time).
// Measured (H200, docs/runs/2026-12-01-h200-sweep_membound_s13_split.json, one process, cold L2,
//   each against v4_dispatch = v12 at these shapes, twice): 2048 x 131072 bf16 268.0 / 267.7 us
//   (margin 128) vs 275.7 / 275.4: -2.8%, 0.94x a copy where v12 is 0.91x (predicted 258-266:
//   short of it); margin 64 272.4 (the side grid's last rows finish late), 256 268.3, a margin past M
//   (the main grid alone) 275.2 = v12. 1024 x 262144 bf16 (main C = 16, side C = 4) 286.6 / 287.7
//   vs 303.6 / 303.8: -5.6%. No gain at 4096 x 65536 bf16 (269.5 / 268.8 vs 268.3 / 267.6) nor
//   fp32 2048 x 131072 (526.4 / 526.7 vs 527.8 / 526.6: the side's clusters of 4 find no room):
//   v4_dispatch takes v14 for bf16 rows of 65537-262144 only.
//   `@side_grid online` (-s13_split2.json, same process, twice each): 2048 x 131072 bf16 275.4 /
//   275.1 us (packed_regs 268.1 / 267.8): no gain; fp32 553.5 / 552.1 vs 526.6 / 525.8 and 1024 x
//   262144 bf16 305.6 / 306.4 vs 288.3 / 287.7: slower than no side grid (its blocks of no cluster
//   also fit beside the main grid's on its SMs, and its pass-2 re-reads compete with the main grid's
//   stream through L2); 4096 x 65536 bf16 266.1 / 265.1 vs 269.2 / 268.7 (-1.5%). Kept as a knob,
//   not the default.
// Since session 27 the main grid's sweep is staged_rows.cuh's SB_FAST_EXP (the side grid's v13 body is not):
//   2048 x 131072 bf16 267.6 / 267.6 us against 269.1 / 270.0 (-0.8%; sweep fast27). But v12 alone gained more
//   (276 -> 265.6 us): with the side grid off v14 ran 265.7-266.4 us, with it 267.2-268.4 (sweep split27), so the
//   side grid now slows the main grid more than its rows add, and v4_dispatch no longer takes v14 (op.py
//   DISPATCH_WIDE_SPLIT).
// Measured: BENCHMARKS.md, softmax rows (section membound).
//
// Knobs: the main grid's instances are built with v4_dispatch's DISPATCH_BULK (op.py passes them
// as SB_STAGES, SB_THREADS, SB_BLOCKS_PER_SM, SB_ELEMS); `@side_margin` rows are left to the main
// grid (0: the side grid takes rows to the end; a margin >= M launches the main grid alone);
// `@side_grid` packed_regs (v13's clusters, above) or online: v2's 512-thread online rows (pass 1
// with an L2 evict-last policy, pass 2 its L2 hit) in blocks of no cluster taking rows from the
// counter (counter_rows.cuh), two an SM on any SM the main grid leaves, whether or not a GPC has a
// pair of them free for a cluster; `@side_smem_kib` K launches them with K KiB of dynamic shared
// memory they do not use, so that (K above the ~97 KiB an SM of the main grid has left) they land
// only on idle SMs (unmeasured: scripts/sweep_membound_s13.py, SWEEP_SET=pad, is ready).
//
// @strategy split_grid
// @arch sm_90
// @side_margin 128
// @side_grid packed_regs
// @access_bytes 16
#define SOFTMAX_NO_ENTRY_POINTS
#include "v12_dynamic_rows.cu"  // staged_rows.cuh's dynamic_rows: the main grid
#include "v13_packed_regs.cu"   // packed_reg_rows: the "packed_regs" side grid
#include "v2_online.cu"         // online_row_at: the "online" side grid's row
#include "counter_rows.cuh"     // online_counter_rows: v2's rows taken from the counter

// Entry points: split_grid_instances.cuh (shared with v4_dispatch), every C of both grids and both
// dtypes; written out there (kernelab reads kernel signatures from the text, not macros).
#define SPLIT_GRID_ALL_INSTANCES
#include "split_grid_instances.cuh"

// The names the op contract looks up: the widest main instance (launch through op.py, which adds the side grid).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<float, 16>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<__nv_bfloat16, 16>(x, y, M, N, work, clusters); }
