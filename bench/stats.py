"""Small helpers shared by the benchmarks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no samples")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def time_calls(fn: Callable[[], object], repeat: int) -> list[float]:
    """Seconds per call, `repeat` samples."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def summary(samples: list[float]) -> dict[str, float]:
    return {"p50": percentile(samples, 0.5), "p95": percentile(samples, 0.95), "mean": statistics.fmean(samples)}
