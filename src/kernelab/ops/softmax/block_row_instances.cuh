// block_row_instances.cuh: v1_block_row's entry points, softmax_block_t{64,128,256,512,1024}_{f32,bf16}.
// Included by v1_block_row.cu and by v4_dispatch.cu (which takes v1's code with
// SOFTMAX_NO_ENTRY_POINTS), both after block_row: one list, so the two modules' instances cannot drift
// apart.
//
// One block per row; capacity THREADS * 32 elements: the op's launch picks the smallest block that
// holds N. __launch_bounds__(T, 1024 / T): 1024 threads per SM, so at most 64 registers a thread.
extern "C" __global__ void __launch_bounds__(64, 16)
softmax_block_t64_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::block_row<float, 64, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(128, 8)
softmax_block_t128_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::block_row<float, 128, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_block_t256_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::block_row<float, 256, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_block_t512_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::block_row<float, 512, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_block_t1024_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::block_row<float, 1024, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(64, 16)
softmax_block_t64_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::block_row<__nv_bfloat16, 64, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(128, 8)
softmax_block_t128_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::block_row<__nv_bfloat16, 128, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_block_t256_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::block_row<__nv_bfloat16, 256, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_block_t512_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::block_row<__nv_bfloat16, 512, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_block_t1024_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::block_row<__nv_bfloat16, 1024, 32>(x, y, N); }
