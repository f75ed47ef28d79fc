// half_blocks_instances.cuh: v16_half_blocks's entry points, softmax_hb_c{1..8}_{f32,bf16}.
// Included by v16_half_blocks.cu and by v4_dispatch.cu (its "wide" entry's part-stage widths), both
// after v13_packed_regs.cu (packed_reg_rows): one list, so the two modules' instances cannot drift
// apart.
//
// A cluster of C = 1-8 blocks of 512 threads per row, two blocks an SM. Launch with cluster=C, the
// dynamic shared memory op.py's half_blocks_plan gives (one stage) and `work`: two unsigned (rows
// taken, clusters finished), zero before the launch; the kernel leaves them zero.
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c1_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 1, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c2_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 2, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c3_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 3, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c4_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 4, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c5_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 5, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c6_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 6, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c7_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 7, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c8_f32(const float* __restrict__ x, float* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<float, 8, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c1_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 1, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c2_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 2, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c3_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 3, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c4_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 4, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c5_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 5, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c6_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 6, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c7_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 7, false, 512>(x, y, M, N, work); }
extern "C" __global__ void __launch_bounds__(512, 2)
softmax_hb_c8_bf16(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int M, int N, unsigned* __restrict__ work) { softmax::preg::packed_reg_rows<__nv_bfloat16, 8, false, 512>(x, y, M, N, work); }
