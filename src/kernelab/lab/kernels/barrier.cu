// __syncthreads() after a partial early return (seeds/003, third exercise), and the fix.
//
// Threads t >= active return before the barrier; the rest write s[t], wait, and read their
// neighbour's value s[(t + 1) % active]. out must then hold (t + 1) % active.
//
// sync_after_return:    __syncthreads() (bar.sync 0: all threads of the block). PTX `exit`
//                       releases a barrier "for all threads in the CTA" that only exited
//                       threads hold up, so on current GPUs this may well finish: the seeds'
//                       deadlock is the documented undefined behaviour, not a guarantee.
// counted_barrier:      the same with a barrier that counts blockDim.x threads explicitly
//                       (bar.sync 1, blockDim.x, as warp-specialised kernels' named barriers
//                       do). Exiting threads do not release a counted barrier: it waits for
//                       threads that will never come. Run only in a child under a watchdog.
// waiter_skips_barrier: thread 0 skips the barrier and waits for a flag that a thread past the
//                       barrier sets; the barrier waits for thread 0, which has not exited.
//                       A deadlock on any GPU. Run only in a child under a watchdog.
// sync_fixed:           the corrected form: every thread reaches the barrier; the condition
//                       only guards the work.
extern "C" __global__ void sync_after_return(float* __restrict__ out, int active) {
  __shared__ float s[1024];
  const int t = threadIdx.x;
  if (t >= active) return;
  s[t] = (float)t;
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[(t + 1) % active];
}

extern "C" __global__ void counted_barrier(float* __restrict__ out, int active) {
  __shared__ float s[1024];
  const int t = threadIdx.x;
  if (t >= active) return;
  s[t] = (float)t;
  asm volatile("bar.sync 1, %0;" ::"r"(blockDim.x) : "memory");
  out[blockIdx.x * blockDim.x + t] = s[(t + 1) % active];
}

extern "C" __global__ void waiter_skips_barrier(float* __restrict__ out, int* __restrict__ flag) {
  __shared__ float s[1024];
  const int t = threadIdx.x;
  if (t == 0) {
    while (atomicAdd(flag, 0) == 0) {
    }
    return;
  }
  s[t] = (float)t;
  __syncthreads();
  if (t == 1) atomicExch(flag, 1);
  out[blockIdx.x * blockDim.x + t] = s[t];
}

extern "C" __global__ void sync_fixed(float* __restrict__ out, int active) {
  __shared__ float s[1024];
  const int t = threadIdx.x;
  const bool live = t < active;
  if (live) s[t] = (float)t;
  __syncthreads();
  if (live) out[blockIdx.x * blockDim.x + t] = s[(t + 1) % active];
}
