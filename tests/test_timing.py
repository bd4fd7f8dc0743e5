"""Measured numbers are marked, and the sanitize file rewrites exactly the marked ones."""
import configparser
import itertools
import re

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


def sanitize(text):
    """Apply tests/sanitize.cfg the way nbval does."""
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "sanitize.cfg", encoding="utf-8")
    for section in config.sections():
        text = re.sub(config[section]["regex"], config[section]["replace"], text)
    return text


@pytest.mark.parametrize("seconds", [3.2e-6, 0.0123, 1.5, 1234.0])
def test_every_duration_is_rewritten(seconds):
    assert sanitize(f"fused: {format_time(seconds)}") == "fused: ~(measured) ms"


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
    """perf_counter that advances by what the candidate being timed 'costs'."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def costs(self, *seconds):
        """A candidate whose calls take these durations in turn, repeating."""
        durations = itertools.cycle(seconds)

        def candidate():
            self.now += next(durations)
        return candidate


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(timing.time, "perf_counter", fake)
    return fake


def test_a_clear_difference_is_reported_as_a_ratio(clock):
    result = compare_times(
        {"modules": clock.costs(0.010), "fused": clock.costs(0.030)},
        baseline="modules", rounds=8, warmup=0,
    )
    assert result.quartiles("modules") == pytest.approx((0.010, 0.010, 0.010))
    assert result.verdict("fused") == "~3x"
    assert sanitize(result.report()) == (
        "modules: ~(measured) ms (IQR ~(measured) ms to ~(measured) ms)\n"
        "  fused: ~(measured) ms (IQR ~(measured) ms to ~(measured) ms); "
        "vs modules: ~(measured)x (IQR ~(measured)x to ~(measured)x)"
    )


def test_a_difference_inside_the_spread_is_not_reported_as_one(clock):
    noisy = [0.008, 0.012, 0.009, 0.011, 0.010, 0.013, 0.007, 0.010]
    result = compare_times(
        {"modules": clock.costs(0.010), "fused": clock.costs(*noisy)},
        baseline="modules", rounds=8, warmup=0,
    )
    assert result.verdict("fused") == timing.NO_DIFFERENCE
    # Both verdicts read the same to nbval, so a verdict that flips between runs cannot fail it.
    assert sanitize(timing.NO_DIFFERENCE) == sanitize(format_ratio(1.3))


def test_rounds_are_interleaved_and_threads_restored(clock):
    order = []
    threads_before = torch.get_num_threads()
    compare_times(
        {name: (lambda name=name: order.append((name, torch.get_num_threads())))
         for name in "abc"},
        baseline="a", rounds=4, warmup=0, threads=1,
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
