// split_grid_instances.cuh: v14_split_grid's entry points. Main grid: softmax_sg_a_[e32_]c*_*, v12's
// instances (E fp32 values a thread, clusters of C) taking `clusters`, both grids' total. Side grid:
// softmax_sg_b_c*_*, v13's instances (clusters of C blocks of 1024 threads), or softmax_sg_o_*, v2's
// 512-thread online rows (pass 1 kept in L2 by an evict-last policy; two blocks an SM, no cluster),
// both taking rows from the counter while below `stop`. op.py's split_grid_launch launches both grids.
// Included by v14_split_grid.cu and by v4_dispatch.cu (its "split" entries), both after v12's, v13's,
// v2's and counter_rows.cuh's code: one list, so the two modules' instances cannot drift apart. v4
// compiles the first six, the bf16 instances its plans take; v14 #defines SPLIT_GRID_ALL_INSTANCES
// first, for the rest (the other C and fp32, which its own sweeps take).

// bf16: the sm_90 / sm_100 plans take main C = 8 / 16 and side C = 2 / 4; sm_120 (99 KiB a block)
// side C = 4 / 8; and the "online" side grid (`@side_grid online`).
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<__nv_bfloat16, 8, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<__nv_bfloat16, 16, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<__nv_bfloat16, 2, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<__nv_bfloat16, 4, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<__nv_bfloat16, 8, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_sg_o_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::crow::online_counter_rows<__nv_bfloat16, 512, 4>(x, y, M, N, work, clusters, stop); }

#ifdef SPLIT_GRID_ALL_INSTANCES  // v14_split_grid's own module; v4_dispatch leaves these out
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<float, 1, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<float, 2, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<float, 4, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<float, 8, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<float, 16, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_e32_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<float, 16, 32>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<__nv_bfloat16, 1, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<__nv_bfloat16, 2, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<__nv_bfloat16, 4, SB_ELEMS>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_sg_a_e32_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters) { softmax::staged::dynamic_rows<__nv_bfloat16, 16, 32>(x, y, M, N, work, clusters); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<float, 1, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<float, 2, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<float, 4, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<float, 8, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_sg_b_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::preg::packed_reg_rows<__nv_bfloat16, 1, true>(x, y, M, N, work, clusters, stop); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_sg_o_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work, unsigned clusters, unsigned stop) { softmax::crow::online_counter_rows<float, 512, 4>(x, y, M, N, work, clusters, stop); }
#endif
