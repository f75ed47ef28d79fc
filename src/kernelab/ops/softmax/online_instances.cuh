// online_instances.cuh: v2_online's entry points, softmax_online_t512_{f32,bf16}.
// Included by v2_online.cu and by v4_dispatch.cu (which takes v2's code with SOFTMAX_NO_ENTRY_POINTS),
// both after online_row: one list, so the two modules' instances cannot drift apart.
//
// One block per row, any width. 512 threads, 2 blocks per SM (<= 64 registers): while one block waits
// at its barrier, the other keeps loads in flight.
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_online_t512_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::online_row<float, 512, 4>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_online_t512_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::online_row<__nv_bfloat16, 512, 4>(x, y, N); }
