"""Compile many modules at once in the CPU tests: NVRTC releases the GIL, so a thread per core
compiles in parallel (CI has 2 cores; the every-kernel tests were ~320 s of its ~13 min serially)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor


def map_compiles(fn, jobs) -> list:
    """[(job, fn(job) or the exception it raised)] in the order of `jobs`; the caller asserts."""
    def one(job):
        try:
            return job, fn(job)
        except Exception as e:  # reported by the caller, with the job that raised it
            return job, e
    jobs = list(jobs)
    if not jobs:
        return []
    # The first one alone: two threads importing cuda.core at once fail ("cannot import name
    # 'Program' from 'cuda.core.cu13'", seen here with cuda-core 1.2 when nothing had imported it).
    first = one(jobs[0])
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return [first] + list(pool.map(one, jobs[1:]))
