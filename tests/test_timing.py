"""Measured numbers are marked, and the sanitize file rewrites exactly the marked ones."""
import configparser
import re

import pytest

from conftest import ROOT
from gradbook import format_ratio, format_time, median_time


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


def test_unmarked_numbers_are_left_alone():
    text = "12.3 ms, 1.5x, ~4096 bytes, gradcheck: True"
    assert sanitize(text) == text


def test_median_time_measures_and_checks_its_arguments():
    calls = []
    assert median_time(lambda: calls.append(1), repeat=3, warmup=2) >= 0
    assert len(calls) == 5
    with pytest.raises(TypeError, match="function to call"):
        median_time(42)
    with pytest.raises(ValueError, match="repeat >= 1"):
        median_time(lambda: None, repeat=0)
