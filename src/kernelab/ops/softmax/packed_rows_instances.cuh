// packed_rows_instances.cuh: v6_packed_rows's entry points, softmax_pk_warp_c{256,512,1024}[_full]_* and
// softmax_pk_block_t{64..1024}[_full]_* (bf16 also t1024_e32[_full] below 32 elements a thread).
// Included by v6_packed_rows.cu and by v4_dispatch.cu (its "packed" entries), both after v6's code and
// its PK_* launch-bound macros: one list, so the two modules' instances cannot drift apart. v4 builds
// them with the PK_* defaults in v6_packed_rows.cu, v6 with its header's knobs (op.py passes them).

// Warp rows of up to 256 / 512 / 1024 elements (the plan takes the narrowest that holds N);
// `_full`: rows of exactly that width, 16-byte aligned (op.py picks it at launch).
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W256_F32)
softmax_pk_warp_c256_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::warp_rows<float, 256, false>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W512_F32)
softmax_pk_warp_c512_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::warp_rows<float, 512, false>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W1024_F32)
softmax_pk_warp_c1024_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::warp_rows<float, 1024, false>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W256_BF16)
softmax_pk_warp_c256_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::warp_rows<__nv_bfloat16, 256, false>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W512_BF16)
softmax_pk_warp_c512_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::warp_rows<__nv_bfloat16, 512, false>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W1024_BF16)
softmax_pk_warp_c1024_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::warp_rows<__nv_bfloat16, 1024, false>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W256_F32)
softmax_pk_warp_c256_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::warp_rows<float, 256, true>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W512_F32)
softmax_pk_warp_c512_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::warp_rows<float, 512, true>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W1024_F32)
softmax_pk_warp_c1024_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::warp_rows<float, 1024, true>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W256_FULL_BF16)
softmax_pk_warp_c256_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::warp_rows<__nv_bfloat16, 256, true>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W512_FULL_BF16)
softmax_pk_warp_c512_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::warp_rows<__nv_bfloat16, 512, true>(x, y, M, N); }
extern "C" __global__ void __launch_bounds__(PK_WARP_THREADS, PK_MB_W1024_FULL_BF16)
softmax_pk_warp_c1024_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::warp_rows<__nv_bfloat16, 1024, true>(x, y, M, N); }

// Block rows of up to THREADS x PK_BLOCK_ELEMS (fp32: PK_BLOCK_ELEMS_F32) elements, one row a
// block; `_full` as above.
extern "C" __global__ void __launch_bounds__(64, PK_MB_T64_F32)
softmax_pk_block_t64_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 64, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(128, PK_MB_T128_F32)
softmax_pk_block_t128_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 128, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(256, PK_MB_T256_F32)
softmax_pk_block_t256_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 256, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, PK_MB_T512_F32)
softmax_pk_block_t512_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 512, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, PK_MB_T1024_F32)
softmax_pk_block_t1024_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 1024, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(64, PK_MB_T64_BF16)
softmax_pk_block_t64_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 64, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(128, PK_MB_T128_BF16)
softmax_pk_block_t128_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 128, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(256, PK_MB_T256_BF16)
softmax_pk_block_t256_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 256, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, PK_MB_T512_BF16)
softmax_pk_block_t512_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 512, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, PK_MB_T1024_BF16)
softmax_pk_block_t1024_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 1024, false>(x, y, N); }
extern "C" __global__ void __launch_bounds__(64, PK_MB_T64_F32)
softmax_pk_block_t64_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 64, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(128, PK_MB_T128_F32)
softmax_pk_block_t128_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 128, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(256, PK_MB_T256_F32)
softmax_pk_block_t256_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 256, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, PK_MB_T512_F32)
softmax_pk_block_t512_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 512, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, PK_MB_T1024_F32)
softmax_pk_block_t1024_full_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N) { softmax::pk::block_row<float, 1024, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(64, PK_MB_T64_BF16)
softmax_pk_block_t64_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 64, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(128, PK_MB_T128_BF16)
softmax_pk_block_t128_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 128, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(256, PK_MB_T256_BF16)
softmax_pk_block_t256_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 256, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(512, PK_MB_T512_BF16)
softmax_pk_block_t512_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 512, true>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, PK_MB_T1024_BF16)
softmax_pk_block_t1024_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 1024, true>(x, y, N); }

#if PK_BLOCK_ELEMS < 32
// bf16 rows past 1024 x PK_BLOCK_ELEMS (16385-32768 at 16): 1024 threads x 32 elements, the same
// instance as the 32-element default before session 5 (8192 x 32768: 257.4 us, 0.97x a copy).
extern "C" __global__ void __launch_bounds__(1024, PK_MB_T1024_E32_BF16)
softmax_pk_block_t1024_e32_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 1024, false, 32>(x, y, N); }
extern "C" __global__ void __launch_bounds__(1024, PK_MB_T1024_E32_BF16)
softmax_pk_block_t1024_e32_full_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N) { softmax::pk::block_row<__nv_bfloat16, 1024, true, 32>(x, y, N); }
#endif
