"""Native baselines measured in the same run: libc memcpy and numpy's BLAS.

memcpy is called through ctypes (a ``CDLL`` function releases the GIL for
the call), so several Python threads can each copy a slice at the same time.
The destination is preallocated and touched before timing, so no page fault
is timed. The baseline is the better of one thread and ``os.cpu_count()``
threads, and says which.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from _check import assert_close
from _timing import SampleFn, Samples, interleave, now_ns

_PAGE = 4096
_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_memcpy = _libc.memcpy
_memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
_memcpy.restype = ctypes.c_void_p


@dataclass
class MemcpyResult:
    """The best memcpy configuration: bytes copied per ns, threads, samples."""

    samples: Samples  # ns per copy of the whole buffer
    threads: int
    nbytes: int

    def gbps(self, traffic_factor: int = 1, best: bool = False) -> float:
        """GB/s of the median (or best) copy; `traffic_factor=2` counts read+write."""
        ns = self.samples.best if best else self.samples.median
        return self.nbytes * traffic_factor / ns

    @property
    def label(self) -> str:
        """Which configuration won, e.g. 'memcpy (2 threads)'."""
        return f"memcpy ({self.threads} thread{'s' if self.threads > 1 else ''})"


def _slices(nbytes: int, threads: int) -> list[tuple[int, int]]:
    """(offset, length) pieces of `nbytes`, page-aligned, one per thread."""
    step = -(-nbytes // threads)
    step = -(-step // _PAGE) * _PAGE
    return [(o, min(step, nbytes - o)) for o in range(0, nbytes, step)]


def memcpy_copy(
    dst: np.ndarray, src: np.ndarray, pool: ThreadPoolExecutor | None, threads: int
) -> None:
    """Copy src's bytes into dst with libc memcpy: in the calling thread, or in
    `threads` slices run on `pool`."""
    d, s, n = dst.ctypes.data, src.ctypes.data, src.nbytes
    if pool is None:
        _memcpy(d, s, n)
        return
    futures = [
        pool.submit(_memcpy, d + off, s + off, size)
        for off, size in _slices(n, threads)
    ]
    for f in futures:
        f.result()


class MemcpyBench:
    """memcpy of `src` into a preallocated, touched destination, as sample
    functions for 1 thread and for os.cpu_count() threads. Owns the
    destination and the thread pool until `close()`."""

    def __init__(self, src: np.ndarray) -> None:
        """Allocate and touch the destination; start the thread pool."""
        self.src = src
        self.dst = np.empty_like(src)
        self.dst.fill(0)  # touch every page before timing
        self.counts = sorted({1, os.cpu_count() or 1})
        self.pool = ThreadPoolExecutor(max(self.counts))

    def sampler(self, threads: int):
        """Sample function: one whole-buffer copy with `threads` threads; ns."""
        pool = self.pool if threads > 1 else None

        def sample() -> float:
            """One copy of the whole buffer; ns."""
            t0 = now_ns()
            memcpy_copy(self.dst, self.src, pool, threads)
            return now_ns() - t0

        return sample

    def samplers(self) -> dict[str, SampleFn]:
        """{'memcpy xN': sample function} for each thread count."""
        return {f"memcpy x{n}": self.sampler(n) for n in self.counts}

    def best(self, samples: dict[str, Samples]) -> MemcpyResult:
        """The faster configuration (by median) among measured `samples`,
        after checking that the copy is right."""
        assert_close("memcpy baseline", self.src, self.dst, rtol=0)
        results = [
            MemcpyResult(samples[f"memcpy x{n}"], n, self.src.nbytes)
            for n in self.counts
        ]
        return min(results, key=lambda r: r.samples.median)

    def close(self) -> None:
        """Stop the threads and free the destination."""
        self.pool.shutdown()
        self.dst = None


def measure_memcpy(src: np.ndarray, repeat: int) -> MemcpyResult:
    """The best memcpy of `src` (1 vs os.cpu_count() threads, interleaved)."""
    bench = MemcpyBench(src)
    try:
        return bench.best(interleave(bench.samplers(), repeat))
    finally:
        bench.close()


def blas_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """numpy's matmul into a preallocated `out` (numpy's wheel calls its bundled
    BLAS for float32), so only the GEMM is timed."""
    return np.matmul(a, b, out=out)


def blas_name() -> str:
    """The BLAS numpy was built with, from numpy's build configuration."""
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # older numpy: no dict mode
        return "numpy BLAS"
