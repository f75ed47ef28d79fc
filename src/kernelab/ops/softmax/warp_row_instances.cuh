// warp_row_instances.cuh: v0_warp_row's entry points, softmax_warp_e{8,16,32}_{f32,bf16}.
// Included by v0_warp_row.cu and by v4_dispatch.cu (which takes v0's code with
// SOFTMAX_NO_ENTRY_POINTS), both after warp_rows: one list, so the two modules' instances cannot
// drift apart.
//
// One warp per row, 8 rows per 256-thread block; capacity 32 * E elements per row: the op's launch
// picks the smallest E that holds N.
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_warp_e8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::warp_rows<float, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_warp_e16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::warp_rows<float, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_warp_e32_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::warp_rows<float, 32>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_warp_e8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::warp_rows<__nv_bfloat16, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_warp_e16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::warp_rows<__nv_bfloat16, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_warp_e32_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::warp_rows<__nv_bfloat16, 32>(x, y, M, N); }
