// persistent_instances.cuh: v5_persistent's entry points: warps softmax_pw_e{8,16,32}_*, blocks
// softmax_pc_t{64..512}_c1_*, clusters softmax_pc_t{256,512}_c{2..16}_* (sm_90+) and their 64-element
// twins softmax_pc_t*_e64_c*_*.
// Included by v5_persistent.cu and by v4_dispatch.cu (any arch: the clusters are #if __CUDA_ARCH__ >=
// 900), both after v5's code and its PC1* launch-bound macros: one list, so the two modules' instances
// cannot drift apart. v5 #defines PERSISTENT_ALL_CLUSTERS first, for the clusters only its `@threads`
// knob takes; v4 leaves them out (its "persistent" entries take persistent_plan's default order).

// Warps: rows of up to 32 x E elements (256, 512, 1024); single blocks (C = 1): THREADS x 32.
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_pw_e8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::warp_rows<float, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_pw_e16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::warp_rows<float, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pw_e32_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::warp_rows<float, 32>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_pw_e8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::warp_rows<__nv_bfloat16, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 4)
softmax_pw_e16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::warp_rows<__nv_bfloat16, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 3)
softmax_pw_e32_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::warp_rows<__nv_bfloat16, 32>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(64, 8)
softmax_pc_t64_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 64, 32, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(128, 4)
softmax_pc_t128_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 128, 32, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 32, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 512, 32, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(64, PC1_BF16_MIN_BLOCKS_T64)
softmax_pc_t64_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 64, 32, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(128, PC1_BF16_MIN_BLOCKS_T128)
softmax_pc_t128_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 128, 32, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, PC1_BF16_MIN_BLOCKS_T256)
softmax_pc_t256_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 32, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, PC1_BF16_MIN_BLOCKS_T512)
softmax_pc_t512_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 512, 32, 1>(x, y, M, N); }

#if __CUDA_ARCH__ >= 900
// Clusters: capacity THREADS x C x 32 elements, 16384 .. 262144. C = 16 is non-portable. First those
// persistent_plan's default order takes (256-thread blocks in clusters of 2, 4, 8; 512-thread blocks
// in clusters of 8, 16), which v4_dispatch compiles too; then the pairs only the `@threads` knob takes.
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 32, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 32, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 512, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 512, 32, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 3)
softmax_pc_t256_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 32, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 3)
softmax_pc_t256_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 32, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 3)
softmax_pc_t256_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 512, 32, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 512, 32, 16>(x, y, M, N); }
#ifdef PERSISTENT_ALL_CLUSTERS  // v5_persistent's own module; v4_dispatch leaves these out
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 512, 32, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 512, 32, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 32, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 512, 32, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(512, 1)
softmax_pc_t512_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 512, 32, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 3)
softmax_pc_t256_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 32, 16>(x, y, M, N); }
#endif
#endif

// E = 64 (the `@elems 64` knob): half the threads per row, twice the loads in flight per thread;
// bf16 at 512 threads per SM (<= 128 registers: 64 values + 32 raw words), fp32 at 256 (<= 255).
// Blocks hold 4096 .. 16384, clusters of 256-thread blocks 32768 .. 262144.
extern "C" __global__ void __launch_bounds__(64, 4)
softmax_pc_t64_e64_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 64, 64, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(128, 2)
softmax_pc_t128_e64_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 128, 64, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 1)
softmax_pc_t256_e64_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 64, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(64, PC1E64_BF16_MIN_BLOCKS_T64)
softmax_pc_t64_e64_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 64, 64, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(128, PC1E64_BF16_MIN_BLOCKS_T128)
softmax_pc_t128_e64_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 128, 64, 1>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, PC1E64_BF16_MIN_BLOCKS_T256)
softmax_pc_t256_e64_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 64, 1>(x, y, M, N); }
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void __launch_bounds__(256, 1)
softmax_pc_t256_e64_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 64, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 1)
softmax_pc_t256_e64_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 64, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 1)
softmax_pc_t256_e64_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 64, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 1)
softmax_pc_t256_e64_c16_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<float, 256, 64, 16>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_e64_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 64, 2>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_e64_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 64, 4>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_e64_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 64, 8>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(256, 2)
softmax_pc_t256_e64_c16_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pers::cluster_rows<__nv_bfloat16, 256, 64, 16>(x, y, M, N); }
#endif
