"""Wall-clock measurements for the pages, marked so that the tests know they vary.

Every duration or speed ratio a chapter prints goes through ``format_time`` or
``format_ratio``, which write it as "~12.3 ms" or "~1.84x": the tilde says "measured".
tests/sanitize.cfg rewrites exactly the numbers written that way (and the verdict
"~no measurable difference") before nbval compares outputs, and nothing else.

``compare_times`` is the measurement to use for a comparison: interleaved rounds on a fixed
number of threads, medians with their interquartile range, and a ratio against the baseline
that is reported only when its spread excludes 1.
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


NO_DIFFERENCE = "~no measurable difference"


class Comparison:
    """Timings of several candidates measured in interleaved rounds (see ``compare_times``)."""

    def __init__(self, samples, baseline):
        self.samples = samples  # name -> list of seconds, one per round
        self.baseline = baseline

    def quartiles(self, name):
        """(first quartile, median, third quartile) of ``name``'s seconds."""
        return _quartiles(self.samples[name])

    def ratio_quartiles(self, name):
        """Quartiles of ``name``'s time over the baseline's, round by round."""
        pairs = zip(self.samples[name], self.samples[self.baseline])
        return _quartiles([seconds / base for seconds, base in pairs])

    def verdict(self, name):
        """'~1.84x' the baseline's time, or NO_DIFFERENCE when the interquartile range of the
        ratio contains 1: a difference inside the spread is not a measured difference."""
        low, median, high = self.ratio_quartiles(name)
        return NO_DIFFERENCE if low <= 1 <= high else format_ratio(median)

    def report(self):
        """One line per candidate: median time with its spread, and the verdict against the
        baseline. Every number and verdict is marked as measured for the sanitize file."""
        width = max(map(len, self.samples))
        lines = []
        for name in self.samples:
            low, median, high = self.quartiles(name)
            line = (f"{name:>{width}}: {format_time(median)} "
                    f"(IQR {format_time(low)} to {format_time(high)})")
            if name != self.baseline:
                ratio_low, _, ratio_high = self.ratio_quartiles(name)
                line += (f"; vs {self.baseline}: {self.verdict(name)} "
                         f"(IQR {format_ratio(ratio_low)} to {format_ratio(ratio_high)})")
            lines.append(line)
        return "\n".join(lines)


def compare_times(candidates, *, baseline, rounds=15, warmup=2, threads=1):
    """Time each function in ``candidates`` (a dict name -> function) in interleaved rounds.

    Each round calls every candidate once, starting from a different one each time, so that a
    slow phase of the machine (another process, a frequency change) falls on all of them alike.
    Torch runs on ``threads`` threads during the measurement (restored afterwards), so that
    results do not depend on how many cores the reader's machine has free.
    """
    import torch  # here, so that formatting needs no torch

    _check_candidates(candidates, baseline, rounds, warmup, threads)
    names = list(candidates)
    samples = {name: [] for name in names}
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for name in names:
            for _ in range(warmup):
                candidates[name]()
        for round_index in range(rounds):
            start = round_index % len(names)
            for name in names[start:] + names[:start]:
                began = time.perf_counter()
                candidates[name]()
                samples[name].append(time.perf_counter() - began)
    finally:
        torch.set_num_threads(previous_threads)
    return Comparison(samples, baseline)


def _check_candidates(candidates, baseline, rounds, warmup, threads):
    if not isinstance(candidates, dict) or len(candidates) < 2:
        raise TypeError("compare_times: pass a dict of at least two named functions, "
                        "e.g. {'fused': run_fused, 'modules': run_modules}.")
    for name, function in candidates.items():
        if not callable(function):
            raise TypeError(f"compare_times: candidate {name!r} is a "
                            f"{type(function).__name__}, not a function to call.")
    if baseline not in candidates:
        raise ValueError(f"compare_times: baseline {baseline!r} is not one of the candidates "
                         f"{sorted(candidates)}.")
    if rounds < 4 or warmup < 0 or threads < 1:
        raise ValueError("compare_times: need rounds >= 4 (for quartiles), warmup >= 0 and "
                         f"threads >= 1, got {rounds}, {warmup} and {threads}.")


def _quartiles(values):
    low, median, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, median, high
