// tile_order.cuh: transpose v4_grouped_order's and v5_tma_tiles' order of the tiles (the macro GROUP,
// defined by the including file: row tiles per group; >= 65536 is column-major, their default).
#pragma once

// Linear tile index t (dispatch order) -> (row tile, column tile), GROUP row tiles per group,
// row tile fastest inside a group. g_rows = min(GROUP, n_y) keeps per_group = g_rows x n_x <= the
// tile count, which is < 2^32 for any matrix that fits in memory (R x C >= (n_x - 1)(n_y - 1) x
// TILE_ROWS x TILE_COLS elements), so 32-bit division is exact.
struct TileOrder {
  unsigned n_x, n_y, g_rows, per_group;
  __device__ __forceinline__ void coords(unsigned t, unsigned& ty, unsigned& tx) const {
#if GROUP >= 65536
    // Column-major: what the grouped arithmetic below reduces to whenever GROUP >= n_y (one group
    // holds every row tile), with less live state
    // (NVRTC 13.5 spilled 4 bytes of the general form at the 32-register cap on sm_90).
    tx = t / n_y;
    ty = t - tx * n_y;
    return;
#endif
    const unsigned g = t / per_group;        // group: row tiles g x g_rows .. + g_rows - 1
    const unsigned k = t - g * per_group;    // position inside the group
    const unsigned base = g * g_rows;
    const unsigned rows_here = min(g_rows, n_y - base);  // the last group may be shorter
    tx = k / rows_here;
    ty = base + (k - tx * rows_here);
  }
};
