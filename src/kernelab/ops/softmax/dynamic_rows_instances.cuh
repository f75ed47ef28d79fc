// dynamic_rows_instances.cuh: v12_dynamic_rows's entry points, softmax_dy_c{1,2,4,8,16}_{f32,bf16}.
// Included by v12_dynamic_rows.cu and by v4_dispatch.cu, which takes v12's code with
// SOFTMAX_NO_ENTRY_POINTS and these instances from here (and adds its 32-value ones): one list, so the
// two modules' instances cannot drift apart. Needs staged_rows.cuh (dynamic_rows, the SB_* knobs) first.
//
// A cluster of C = 1, 2, 4, 8, 16 blocks of SB_THREADS threads per row. Launch with cluster=C, the
// dynamic shared memory op.py's bulk_plan gives and `work`: two unsigned (rows taken, clusters
// finished), zero before the launch; the kernel leaves them zero.
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 1>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 2>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 4>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 8>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<float, 16>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 1>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 2>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 4>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 8>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(SB_THREADS, SB_MIN_BLOCKS)
softmax_dy_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::staged::dynamic_rows<__nv_bfloat16, 16>(x, y, M, N, work); }
