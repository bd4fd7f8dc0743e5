"""Wall-clock measurements for the pages, marked so that the tests know they vary.

Every duration or speed ratio a chapter prints goes through ``format_time`` or
``format_ratio``, which write it as "~12.3 ms" or "~1.84x": the tilde says "measured".
tests/sanitize.cfg rewrites exactly the numbers written that way (and the verdict
"~no measurable difference") before nbval compares outputs, and nothing else.

``compare_times`` is the measurement to use for a comparison. It follows the method of
``timeit`` and ``torch.utils.benchmark``: each sample is a block of calls long enough for the
clock to resolve it (``block_seconds``), timed with Python's garbage collector off; the
candidates' samples are interleaved round by round, on a fixed number of threads. A
candidate's time is the median over rounds, with the interquartile range (IQR); a ratio is the
median of the round-by-round ratios, printed with their IQR (so the figure lies inside its
spread), and reported only when that IQR excludes 1. The thread's CPU time is recorded beside
the wall time: on a quiet machine the two are equal, and a CPU/wall share below
``MIN_CPU_SHARE`` says that other processes took the core, so no ratio is reported at all.
The share cannot see a process on another core that slows this one through shared memory
bandwidth or clock frequency: one run's IQR is not the spread between runs.
"""
import decimal
import gc
import math
import platform
import statistics
import time
from pathlib import Path

_CPUINFO = Path("/proc/cpuinfo")  # Linux's; other systems fall back to platform


def cpu_name():
    """The CPU that ran a page's timings, as the kernel names it ("model name" in Linux's
    /proc/cpuinfo), else as ``platform.processor()`` does, else "not named"."""
    if _CPUINFO.exists():
        for line in _CPUINFO.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "not named"


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


_SECONDS_TO = {"ns": 1e9, "µs": 1e6, "ms": 1e3}


def format_time(seconds, unit="ms"):
    """A duration for the page, e.g. '~12.3 ms', '~37.6 ns' or '~2300 ms' (the tilde says it
    was measured); ``unit`` is "ns", "µs" or "ms"; never in scientific notation."""
    if unit not in _SECONDS_TO:
        raise ValueError(f"format_time: unit must be one of {', '.join(_SECONDS_TO)}, got {unit!r}.")
    value = seconds * _SECONDS_TO[unit]
    if value >= 100:
        return f"~{value:.0f} {unit}"
    return f"~{_three_digits(value)} {unit}"


def _three_digits(number):
    """Three significant digits, never in scientific notation: 4.24e-05 is written 0.0000424
    and 2.26e+04 is written 22600 (Decimal's "f" format)."""
    return f"{decimal.Decimal(f'{number:.3g}'):f}"


def format_ratio(ratio):
    """A measured speed ratio for the page, e.g. '~1.84x' or '~22600x' (no exponent)."""
    return f"~{_three_digits(ratio)}x"


NO_DIFFERENCE = "~no measurable difference"
BUSY = "~not measured, the machine was busy"

# Below this share of CPU time over wall time, other processes took the core while we timed.
MIN_CPU_SHARE = 0.9


class Comparison:
    """Timings of several candidates measured in interleaved rounds (see ``compare_times``)."""

    def __init__(self, samples, baseline, cpu_seconds=None, calls_per_block=None):
        self.samples = samples  # name -> list of seconds per call, one per round
        self.baseline = baseline
        self.cpu_seconds = cpu_seconds  # name -> thread CPU seconds per call, per round
        self.calls_per_block = calls_per_block or {name: 1 for name in samples}

    def quartiles(self, name):
        """(first quartile, median, third quartile) of ``name``'s seconds per call."""
        return _quartiles(self.samples[name])

    def ratio_quartiles(self, name, over=None, scale=1):
        """Quartiles of ``name``'s time over ``scale`` times the baseline's (or candidate
        ``over``'s), round by round. ``scale`` prices repeated calls: ``scale=n`` compares one
        call of ``name`` with n calls of ``over``."""
        over = self.baseline if over is None else over
        if over not in self.samples:
            raise ValueError(f"ratio_quartiles: {over!r} is not one of the candidates "
                             f"{list(self.samples)}.")
        if not scale > 0:
            raise ValueError(f"ratio_quartiles: scale must be a positive number of calls, "
                             f"got {scale!r}.")
        pairs = zip(self.samples[name], self.samples[over])
        return _quartiles([seconds / (scale * base) for seconds, base in pairs])

    def ratio(self, name):
        """The median of ``name``'s round-by-round ratios to the baseline: the statistic whose
        IQR ``ratio_quartiles`` gives (a ratio of the two medians can fall outside it)."""
        return self.ratio_quartiles(name)[1]

    def busy(self):
        """True when this thread got less than MIN_CPU_SHARE of the wall time it was timed for."""
        share = self.cpu_share()
        return share is not None and share < MIN_CPU_SHARE

    def verdict(self, name, over=None, scale=1):
        """'~1.84x' (the median round-by-round ratio, over the baseline or ``over`` times
        ``scale``, as in ``ratio_quartiles``); NO_DIFFERENCE when the interquartile range of
        those ratios contains 1, since a difference inside the spread is not measured; BUSY
        when other processes took the core (``busy``), whatever the ratio."""
        if self.busy():
            return BUSY
        low, median, high = self.ratio_quartiles(name, over, scale)
        return NO_DIFFERENCE if low <= 1 <= high else format_ratio(median)

    def cpu_share(self):
        """Thread CPU time over wall time, all samples together: about 1 on a quiet machine."""
        if not self.cpu_seconds:
            return None
        cpu = sum(sum(values) for values in self.cpu_seconds.values())
        wall = sum(sum(values) for values in self.samples.values())
        return cpu / wall if wall > 0 else None

    def report(self, wrap=False, units=None):
        """One line per candidate: median time with its spread, and the verdict against the
        baseline (on a second line indented by two spaces if ``wrap``, so that a narrow
        screen shows it whole). ``units`` maps a candidate to "ns", "µs" or "ms" (the default)
        for its times. Every number and verdict is marked as measured for the sanitize file."""
        units = units or {}
        unknown = set(units) - set(self.samples)
        if unknown:
            raise ValueError(f"report: units names no candidate: {sorted(unknown)}; "
                             f"the candidates are {sorted(self.samples)}.")
        width = max(map(len, self.samples))
        lines = []
        for name in self.samples:
            low, median, high = self.quartiles(name)
            unit = units.get(name, "ms")
            line = (f"{name:>{width}}: {format_time(median, unit)} "
                    f"(IQR {format_time(low, unit)} to {format_time(high, unit)})")
            if name != self.baseline:
                ratio_low, _, ratio_high = self.ratio_quartiles(name)
                against = (f"vs {self.baseline}: {self.verdict(name)} "
                           f"(round by round IQR {format_ratio(ratio_low)} to "
                           f"{format_ratio(ratio_high)})")
                line += f"\n  {against}" if wrap else f"; {against}"
            lines.append(line)
        return "\n".join(lines)


def compare_times(candidates, *, baseline, rounds=15, warmup=2, threads=1, block_seconds=0.02):
    """Time each function in ``candidates`` (a dict name -> function) in interleaved rounds.

    Each round takes one sample of every candidate, starting from a different one each time, so
    that a slow phase of the machine (another process, a frequency change) falls on all of them
    alike. A sample is a block of calls lasting at least ``block_seconds`` (the number of calls
    is set once per candidate, after the warm-up), timed with the garbage collector off, and
    divided by its number of calls; ``block_seconds=0`` takes one call per sample. Torch runs on
    ``threads`` threads during the measurement (restored afterwards), so that results do not
    depend on how many cores the reader's machine has free.
    """
    import torch  # here, so that formatting needs no torch

    _check_candidates(candidates, baseline, rounds, warmup, threads, block_seconds)
    names = list(candidates)
    samples = {name: [] for name in names}
    cpu_seconds = {name: [] for name in names}
    calls = {}
    previous_threads = torch.get_num_threads()
    gc_was_enabled = gc.isenabled()
    torch.set_num_threads(threads)
    try:
        for name in names:
            for _ in range(warmup):
                candidates[name]()
            calls[name] = _calls_per_block(candidates[name], block_seconds)
        gc.disable()
        for round_index in range(rounds):
            start = round_index % len(names)
            for name in names[start:] + names[:start]:
                function, number = candidates[name], calls[name]
                cpu_began, began = time.thread_time(), time.perf_counter()
                for _ in range(number):
                    function()
                wall = time.perf_counter() - began
                samples[name].append(wall / number)
                cpu_seconds[name].append((time.thread_time() - cpu_began) / number)
    finally:
        if gc_was_enabled:
            gc.enable()
        torch.set_num_threads(previous_threads)
    return Comparison(samples, baseline, cpu_seconds, calls)


def calls_by_operator(run, *, numel=None):
    """How many times each operator ran during one call of ``run()``, by profiler name
    ("aten::add_"); with ``numel``, only the calls whose first input has that many elements.

    torch.profiler records the operators as they run; unlike a TorchDispatchMode it does not
    change which operators run (under a mode, the engine's in-place accumulations become
    out-of-place adds), so it counts what a plain run does.
    """
    import collections

    from torch.profiler import ProfilerActivity, profile

    from .memory import _quiet_file_descriptor

    if not callable(run):
        raise TypeError(f"calls_by_operator: expected a function to call, got {type(run).__name__}.")
    if numel is not None and (not isinstance(numel, int) or numel < 0):
        raise ValueError(f"calls_by_operator: numel must be a count of elements, got {numel!r}.")
    with _quiet_file_descriptor(2):  # Kineto's start and stop lines stay off the page
        with profile(activities=[ProfilerActivity.CPU], record_shapes=numel is not None) as profiler:
            run()
    calls = collections.Counter()
    for event in profiler.events():
        if numel is not None:
            shapes = event.input_shapes
            # a 0-d first input (shape []) is a number, never a full-size tensor
            if not shapes or not shapes[0] or math.prod(shapes[0]) != numel:
                continue
        calls[event.name] += 1
    return calls


def _calls_per_block(function, block_seconds):
    """How many calls of ``function`` last at least ``block_seconds`` (1 if that is 0)."""
    if block_seconds == 0:
        return 1
    began = time.perf_counter()
    function()
    one_call = time.perf_counter() - began
    if one_call <= 0:
        return 1
    return max(1, math.ceil(block_seconds / one_call))


def _check_candidates(candidates, baseline, rounds, warmup, threads, block_seconds):
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
    if rounds < 4 or warmup < 0 or threads < 1 or block_seconds < 0:
        raise ValueError("compare_times: need rounds >= 4 (for quartiles), warmup >= 0, "
                         f"threads >= 1 and block_seconds >= 0, got {rounds}, {warmup}, "
                         f"{threads} and {block_seconds}.")


def _quartiles(values):
    low, median, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, median, high
