"""Wall-clock measurements for the pages, marked so that the tests know they vary.

Every duration or speed ratio a chapter prints goes through ``format_time`` or
``format_ratio``, which write it as "~12.3 ms" or "~1.84x": the tilde says "measured".
tests/sanitize.cfg rewrites exactly the numbers written that way before nbval compares
outputs, and nothing else.
"""
import statistics
import time

def median_time(function, *, repeat=7, warmup=1):
    """Median wall-clock seconds of ``function()`` over ``repeat`` calls, after ``warmup`` calls."""
    if not callable(function):
        raise TypeError(f"median_time: expected a function to call, got {type(function).__name__}.")
    if repeat < 1 or warmup < 0:
        raise ValueError(f"median_time: need repeat >= 1 and warmup >= 0, got {repeat} and {warmup}.")
    for _ in range(warmup):
        function()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def format_time(seconds):
    """A duration for the page, e.g. '~12.3 ms' (the tilde says it was measured)."""
    return f"~{seconds * 1e3:.3g} ms"


def format_ratio(ratio):
    """A measured speed ratio for the page, e.g. '~1.84x'."""
    return f"~{ratio:.3g}x"
