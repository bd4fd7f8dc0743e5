"""Measured numbers are marked, and the sanitize file rewrites exactly the marked ones."""
import itertools
import sys

import pytest
import torch

from conftest import ROOT
from gradbook import (
    compare_times,
    format_batch_size,
    format_peak,
    format_ratio,
    format_time,
    median_time,
    timing,
)

sys.path.insert(0, str(ROOT / "tools"))
import run_elsewhere  # noqa: E402  (tools/ is not a package)


SANITIZERS = run_elsewhere.load_sanitizers(ROOT / "tests" / "sanitize.cfg")


def sanitize(text):
    """Apply tests/sanitize.cfg the way nbval does (its own parser, which keeps spaces)."""
    return run_elsewhere.sanitize(text, SANITIZERS)


@pytest.mark.parametrize("seconds", [4.24e-8, 3.2e-6, 0.0123, 1.5, 1234.0])
def test_every_duration_is_rewritten(seconds):
    assert sanitize(f"fused: {format_time(seconds)}") == "fused: ~(measured) ms"
    assert "e" not in format_time(seconds)  # no scientific notation


def test_long_durations_are_whole_milliseconds():
    assert format_time(4.3) == "~4300 ms"
    assert format_time(0.0123) == "~12.3 ms"


def test_short_durations_keep_three_digits_without_exponent():
    assert format_time(4.24e-8) == "~0.0000424 ms"
    assert format_time(3.2e-6) == "~0.0032 ms"


def test_large_ratios_are_written_without_exponent():
    assert format_ratio(22600.4) == "~22600x"
    assert format_ratio(1.844) == "~1.84x"


@pytest.mark.parametrize("ratio", [0.5, 1.84, 12.0])
def test_every_ratio_is_rewritten(ratio):
    assert sanitize(f"slower by {format_ratio(ratio)}") == "slower by ~(measured)x"


@pytest.mark.parametrize("num_bytes", [0, 6_908_000, 21_180_000, 3 * 2**30])
def test_every_profiled_peak_is_rewritten(num_bytes):
    assert sanitize(f"peak {format_peak(num_bytes)}") == "peak ~(measured) MiB"


@pytest.mark.parametrize("images", [0, 7, 245])
def test_every_batch_size_from_a_peak_is_rewritten(images):
    text = f"fits {format_batch_size(images)}"
    assert sanitize(text) == "fits ~(measured) images"


def test_a_batch_size_must_be_a_count():
    with pytest.raises(ValueError, match="count of images"):
        format_batch_size(12.5)


def test_unmarked_numbers_are_left_alone():
    text = "12.3 ms, 1.5x, ~4096 bytes, 20.20 MiB, 202 images, gradcheck: True"
    assert sanitize(text) == text


def test_median_time_measures_and_checks_its_arguments():
    calls = []
    assert median_time(lambda: calls.append(1), repeat=3, warmup=2) >= 0
    assert len(calls) == 5
    with pytest.raises(TypeError, match="function to call"):
        median_time(42)
    with pytest.raises(ValueError, match="repeat >= 1"):
        median_time(lambda: None, repeat=0)


class FakeClock:
    """perf_counter that advances by what the candidate being timed 'costs'; ``cpu`` is the
    thread_time beside it, which gets ``cpu_share`` of that (1: the thread ran alone)."""

    def __init__(self, cpu_share=1.0):
        self.now = 0.0
        self.cpu_share = cpu_share

    def __call__(self):
        return self.now

    def cpu(self):
        return self.now * self.cpu_share

    def costs(self, *seconds):
        """A candidate whose calls take these durations in turn, repeating."""
        durations = itertools.cycle(seconds)

        def candidate():
            self.now += next(durations)
        return candidate


def install_clock(monkeypatch, fake):
    monkeypatch.setattr(timing.time, "perf_counter", fake)
    monkeypatch.setattr(timing.time, "thread_time", fake.cpu)
    return fake


@pytest.fixture
def clock(monkeypatch):
    return install_clock(monkeypatch, FakeClock())


def test_a_clear_difference_is_reported_as_a_ratio(clock):
    result = compare_times(
        {"modules": clock.costs(0.010), "fused": clock.costs(0.030)},
        baseline="modules", rounds=8, warmup=0, block_seconds=0,
    )
    assert result.quartiles("modules") == pytest.approx((0.010, 0.010, 0.010))
    assert result.verdict("fused") == "~3x"
    assert sanitize(result.report()) == (
        "modules: ~(measured) ms (IQR ~(measured) ms to ~(measured) ms)\n"
        "  fused: ~(measured) ms (IQR ~(measured) ms to ~(measured) ms); "
        "vs modules: ~(measured)x (round by round IQR ~(measured)x to ~(measured)x)"
    )


def test_a_difference_inside_the_spread_is_not_reported_as_one(clock):
    noisy = [0.008, 0.012, 0.009, 0.011, 0.010, 0.013, 0.007, 0.010]
    result = compare_times(
        {"modules": clock.costs(0.010), "fused": clock.costs(*noisy)},
        baseline="modules", rounds=8, warmup=0, block_seconds=0,
    )
    assert result.verdict("fused") == timing.NO_DIFFERENCE
    # All verdicts read the same to nbval, so a verdict that flips between runs cannot fail it.
    assert sanitize(timing.NO_DIFFERENCE) == sanitize(format_ratio(1.3))
    assert sanitize(timing.BUSY) == sanitize(format_ratio(1.3))


def test_rounds_are_interleaved_and_threads_restored(clock):
    order = []
    threads_before = torch.get_num_threads()
    compare_times(
        {name: (lambda name=name: order.append((name, torch.get_num_threads())))
         for name in "abc"},
        baseline="a", rounds=4, warmup=0, threads=1, block_seconds=0,
    )
    assert [name for name, _ in order] == list("abc" "bca" "cab" "abc")
    assert {threads for _, threads in order} == {1}
    assert torch.get_num_threads() == threads_before


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"candidates": {"a": print}, "baseline": "a"}, TypeError, "at least two"),
        ({"candidates": {"a": print, "b": 3}, "baseline": "a"}, TypeError, "'b' is a int"),
        ({"candidates": {"a": print, "b": print}, "baseline": "c"}, ValueError, "baseline 'c'"),
        ({"candidates": {"a": print, "b": print}, "baseline": "a", "rounds": 3},
         ValueError, "rounds >= 4"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kwargs, error, message):
    with pytest.raises(error, match=message):
        compare_times(kwargs.pop("candidates"), **kwargs)


def test_a_sample_is_a_block_of_calls_with_the_gc_off(clock):
    """Each sample times enough calls to last block_seconds; the GC is off while timing."""
    import gc

    gc_states = []

    def cheap():
        clock.now += 0.001
        gc_states.append(gc.isenabled())

    result = compare_times({"a": cheap, "b": clock.costs(0.004)}, baseline="a",
                           rounds=4, warmup=0, block_seconds=0.01)
    assert result.calls_per_block == {"a": 10, "b": 3}
    assert result.quartiles("a") == pytest.approx((0.001, 0.001, 0.001))
    assert result.quartiles("b") == pytest.approx((0.004, 0.004, 0.004))
    assert gc_states[-1] is False  # timed rounds ran without the collector
    assert gc.isenabled()  # and it is back on afterwards


def test_the_ratio_is_the_median_of_the_round_by_round_ratios(clock):
    """Round by round the ratios are 9, 3, 6 and 2.25: median 4.5, IQR 2.81 to 6.75. The ratio
    of the two medians (0.075 / 0.010 = 7.5) would lie outside the spread printed beside it."""
    result = compare_times(
        {"base": clock.costs(0.010, 0.010, 0.010, 0.040),
         "other": clock.costs(0.090, 0.030, 0.060, 0.090)},
        baseline="base", rounds=4, warmup=0, block_seconds=0,
    )
    low, _, high = result.ratio_quartiles("other")
    assert result.ratio("other") == pytest.approx(4.5)
    assert low <= result.ratio("other") <= high
    assert result.verdict("other") == "~4.5x"


def test_a_ratio_over_another_candidate_pairs_the_same_rounds(clock):
    """Over "base", "other" runs 9, 3, 6 and 2.25 times as long; over "third" (0.030 every
    round), 3, 1, 2 and 3: the rounds are paired, not the two distributions' quartiles."""
    result = compare_times(
        {"base": clock.costs(0.010, 0.010, 0.010, 0.040),
         "other": clock.costs(0.090, 0.030, 0.060, 0.090),
         "third": clock.costs(0.030)},
        baseline="base", rounds=4, warmup=0, block_seconds=0,
    )
    assert result.ratio_quartiles("other", over="base") == result.ratio_quartiles("other")
    low, median, high = result.ratio_quartiles("other", over="third")
    assert median == pytest.approx(2.5)
    assert (low, high) == pytest.approx((1.75, 3.0))
    with pytest.raises(ValueError, match="'fourth' is not one of the candidates"):
        result.ratio_quartiles("other", over="fourth")


def test_a_scaled_ratio_prices_one_call_against_several(clock):
    """One call of "hessian" (0.090, 0.030, 0.060, 0.090 s) against 10 calls of "product"
    (0.003 s each): round by round 3, 1, 2 and 3, so 2.5 with an IQR of 1.75 to 3; a
    scale of 25 puts 1 inside that spread, and a scale that is not a count is refused."""
    result = compare_times(
        {"product": clock.costs(0.003),
         "hessian": clock.costs(0.090, 0.030, 0.060, 0.090)},
        baseline="product", rounds=4, warmup=0, block_seconds=0,
    )
    low, median, high = result.ratio_quartiles("hessian", over="product", scale=10)
    assert (low, median, high) == pytest.approx((1.75, 2.5, 3.0))
    assert result.verdict("hessian", over="product", scale=10) == "~2.5x"
    assert result.verdict("hessian", scale=25) == timing.NO_DIFFERENCE
    with pytest.raises(ValueError, match="scale must be a positive number"):
        result.ratio_quartiles("hessian", scale=0)


def test_no_verdict_when_other_processes_took_the_core(monkeypatch):
    """A thread that got 60 % of the wall time it was timed for: a clear 3x is not reported."""
    clock = install_clock(monkeypatch, FakeClock(cpu_share=0.6))
    result = compare_times(
        {"modules": clock.costs(0.010), "fused": clock.costs(0.030)},
        baseline="modules", rounds=4, warmup=0, block_seconds=0,
    )
    assert result.cpu_share() == pytest.approx(0.6)
    assert result.busy()
    assert result.verdict("fused") == timing.BUSY
    assert "vs modules: ~(measured)x" in sanitize(result.report())


def test_cpu_share_on_the_real_clocks_is_a_fraction_of_the_wall_time():
    """On the real clocks the share is this thread's CPU time over the wall time: above 0 and
    at most about 1. How close to 1 depends on what else the machine runs, so the exact values
    are tested with the fake clock above, not here."""
    def spin():
        total = 0
        for i in range(20_000):
            total += i
        return total

    result = compare_times({"a": spin, "b": spin}, baseline="a", rounds=4, warmup=1,
                           block_seconds=0.005)
    assert 0 < result.cpu_share() <= 1.05


def test_a_wrapped_report_puts_the_verdict_on_its_own_line(clock):
    result = compare_times(
        {"modules": clock.costs(0.010), "fused": clock.costs(0.030)},
        baseline="modules", rounds=4, warmup=0, block_seconds=0,
    )
    lines = result.report(wrap=True).splitlines()
    assert len(lines) == 3 and lines[2].startswith("  vs modules: ~3x")  # two spaces in


def test_calls_by_operator_counts_what_a_plain_run_runs():
    big = torch.ones(200_000, dtype=torch.float64)
    small = torch.ones(3, dtype=torch.float64)

    def convert_and_add():
        total = big.to(torch.float32) + 1
        total.add_(1)  # in place: a TorchDispatchMode would not change the profiler's view
        return total, small + 1

    calls = timing.calls_by_operator(convert_and_add)
    assert calls["aten::add"] == 2 and calls["aten::add_"] == 1
    assert calls["aten::_to_copy"] >= 1 and "aten::mul" not in calls
    full_size = timing.calls_by_operator(convert_and_add, numel=200_000)
    assert full_size["aten::add"] == 1 and full_size["aten::add_"] == 1
    with pytest.raises(TypeError, match="function to call"):
        timing.calls_by_operator(3)
    with pytest.raises(ValueError, match="count of elements"):
        timing.calls_by_operator(convert_and_add, numel=-1)


@pytest.mark.parametrize("unit", ["ns", "µs", "ms"])
def test_durations_in_each_unit_are_rewritten(unit):
    assert sanitize(f"call: {format_time(3.76e-8, unit)} ") == f"call: ~(measured) {unit} "


def test_a_duration_in_nanoseconds_is_scaled():
    assert format_time(3.76e-8, "ns") == "~37.6 ns"
    assert format_time(7.114e-4, "µs") == "~711 µs"


def test_an_unknown_unit_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="ns, µs, ms.*'s'"):
        format_time(1.0, "s")


def test_a_unit_for_an_unknown_candidate_is_refused():
    comparison = compare_times({"a": lambda: None, "c": lambda: None},
                               baseline="a", rounds=4,
                               warmup=0, block_seconds=0)
    with pytest.raises(ValueError, match="names no candidate"):
        comparison.report(units={"b": "ns"})


def test_the_cpu_is_named_as_the_kernel_names_it(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz\n"
                       "processor\t: 1\nmodel name\t: Example CPU @ 2.0GHz\n")
    monkeypatch.setattr(timing, "_CPUINFO", cpuinfo)
    assert timing.cpu_name() == "Example CPU @ 2.0GHz"


def test_without_a_model_name_the_cpu_is_named_by_platform(tmp_path, monkeypatch):
    monkeypatch.setattr(timing, "_CPUINFO", tmp_path / "absent")
    monkeypatch.setattr(timing.platform, "processor", lambda: "arm")
    assert timing.cpu_name() == "arm"
    monkeypatch.setattr(timing.platform, "processor", lambda: "")
    assert timing.cpu_name() == "not named"
