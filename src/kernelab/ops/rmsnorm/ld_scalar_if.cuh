// ld_scalar_if.cuh: one element as a float if pred, else 0.0f (head/tail scalars, layernorm's
// pivot), the predicate inside the asm like the vector loads' (norm_rows.cuh, norm_l2.cuh), so the
// load joins their batch: no branch for NVVM to sink it into, program order kept (asm volatile).
#pragma once
#include <cuda_bf16.h>

namespace normld {

template <typename T>
__device__ __forceinline__ float ld_scalar_if(const T* p, bool pred);
template <>
__device__ __forceinline__ float ld_scalar_if<float>(const float* p, bool pred) {
  float r;
  asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\tmov.b32 %0, 0;\n\t@q ld.global.nc.f32 %0, [%1];\n}"
               : "=&f"(r)
               : "l"(p), "r"(static_cast<int>(pred)));
  return r;
}
template <>
__device__ __forceinline__ float ld_scalar_if<__nv_bfloat16>(const __nv_bfloat16* p, bool pred) {
  unsigned short r;
  asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\tmov.b16 %0, 0;\n\t@q ld.global.nc.u16 %0, [%1];\n}"
               : "=&h"(r)
               : "l"(p), "r"(static_cast<int>(pred)));
  return __uint_as_float(static_cast<unsigned>(r) << 16);  // a bf16 is the top half of an fp32
}

}  // namespace normld
