// cluster_instances.cuh: v3_cluster's entry points, softmax_cluster_t256_c{2,4,8}_* and
// softmax_cluster_t{512,1024}_c8_* (f32, bf16).
// Included by v3_cluster.cu and by v4_dispatch.cu (sm_90+; it takes v3's code with
// SOFTMAX_NO_ENTRY_POINTS), both after cluster_row: one list, so the two modules' instances cannot
// drift apart.
//
// A cluster of C blocks per row (launch with cluster=C); capacity C * THREADS * 32 elements: 16384,
// 32768, 65536, 131072, 262144.
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_cluster_t256_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::cluster_row<float, 256, 32, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_cluster_t256_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::cluster_row<float, 256, 32, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_cluster_t256_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::cluster_row<float, 256, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_cluster_t512_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::cluster_row<float, 512, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_cluster_t1024_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::cluster_row<float, 1024, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_cluster_t256_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::cluster_row<__nv_bfloat16, 256, 32, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_cluster_t256_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::cluster_row<__nv_bfloat16, 256, 32, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_cluster_t256_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::cluster_row<__nv_bfloat16, 256, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_cluster_t512_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::cluster_row<__nv_bfloat16, 512, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(1024, 1)
softmax_cluster_t1024_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::cluster_row<__nv_bfloat16, 1024, 32, 8>(x, y, M, N); }
