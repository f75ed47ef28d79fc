// min_blocks.cuh: __launch_bounds__ minimum blocks per SM for the norm kernels' instances, from
// the including variant's SM_THREADS_BF16 / SM_THREADS_F32 knobs (threads per SM the register cap
// must allow): MINB_<dtype>_T<P> = SM_THREADS / P, at least 1. One flat name per instance:
// kernelab reads kernel signatures with a regex that ends __launch_bounds__(...) at the first
// ')', so the attribute itself must hold no parentheses (gpu/params.py).
#pragma once
#define MINB_F32_T64 (SM_THREADS_F32 / 64 > 0 ? SM_THREADS_F32 / 64 : 1)
#define MINB_F32_T128 (SM_THREADS_F32 / 128 > 0 ? SM_THREADS_F32 / 128 : 1)
#define MINB_F32_T256 (SM_THREADS_F32 / 256 > 0 ? SM_THREADS_F32 / 256 : 1)
#define MINB_F32_T512 (SM_THREADS_F32 / 512 > 0 ? SM_THREADS_F32 / 512 : 1)
#define MINB_F32_T1024 (SM_THREADS_F32 / 1024 > 0 ? SM_THREADS_F32 / 1024 : 1)
#define MINB_BF16_T64 (SM_THREADS_BF16 / 64 > 0 ? SM_THREADS_BF16 / 64 : 1)
#define MINB_BF16_T128 (SM_THREADS_BF16 / 128 > 0 ? SM_THREADS_BF16 / 128 : 1)
#define MINB_BF16_T256 (SM_THREADS_BF16 / 256 > 0 ? SM_THREADS_BF16 / 256 : 1)
#define MINB_BF16_T512 (SM_THREADS_BF16 / 512 > 0 ? SM_THREADS_BF16 / 512 : 1)
#define MINB_BF16_T1024 (SM_THREADS_BF16 / 1024 > 0 ? SM_THREADS_BF16 / 1024 : 1)
