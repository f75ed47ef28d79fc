// bulk_knobs.cuh: the knobs softmax v7 (bulk_smem) and v10-v12 (staged_rows.cuh) are built with,
// from their headers through op.py's bulk_defines: SB_STAGES (the ring's depth), SB_THREADS (a
// block's threads), SB_BLOCKS_PER_SM (the launch bounds' minimum; v10-v12 raise it off sm_90 to cap
// 128 registers: staged_rows.cuh's SB_MIN_BLOCKS). The defaults below are only for a bare compile.
#pragma once

#ifndef SB_STAGES
#define SB_STAGES 3
#endif
#ifndef SB_THREADS
#define SB_THREADS 512
#endif
#ifndef SB_BLOCKS_PER_SM
#define SB_BLOCKS_PER_SM 1
#endif

static_assert(SB_STAGES >= 2 && SB_STAGES <= 8, "SB_STAGES: 2..8 stages");
static_assert(SB_THREADS == 128 || SB_THREADS == 256 || SB_THREADS == 512 || SB_THREADS == 1024,
              "SB_THREADS: 128, 256, 512 or 1024");
