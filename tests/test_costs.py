"""gradbook.costs counts what it says on cases small enough to count by hand, and refuses
arguments it cannot use with a message that names the function."""

import sys
import types

import pytest
import torch

from gradbook import simple_grad
from gradbook.costs import (
    count_calls,
    new_full_size_tensors,
    peaks_in_fresh_process,
    python_calls,
    print_comparison,
    ratio_with_spread,
    replaced,
    simple_grad_variant,
    vectors_alive_at_peak,
)
from gradbook.timing import Comparison

N = 1000


def test_count_calls_sorts_arithmetic_meta_and_other_calls():
    x, y = torch.randn(N), torch.randn(N)
    counter = count_calls(lambda: (x * y).sum())
    assert counter.as_row() == (2, 0, 0)
    assert counter.elements == 3 * N + N + 1  # mul reads 2, writes 1; sum reads N, writes 1
    meta = torch.empty(N, device="meta")
    assert count_calls(lambda: meta * meta).as_row() == (0, 1, 0)
    assert count_calls(lambda: x.clone()).others == {"aten.clone.default": 1}


def test_python_calls_counts_the_callees_of_a_kernel_module_as_inside():
    kernel = types.ModuleType("fake_kernels")
    exec("def helper():\n    return 1\n\ndef kernel():\n    return helper() + helper()\n",
         kernel.__dict__)

    def outside():
        return 0

    def run():
        outside()
        kernel.kernel()

    counts = python_calls(run, kernels=("fake_kernels",))
    assert counts["inside"] == 3  # kernel and the two helpers it calls
    assert counts["all"] == counts["inside"] + 2  # run and outside
    assert sys.getprofile() is None


def test_new_full_size_tensors_counts_new_memory_not_views():
    x = torch.randn(N)

    def run():
        y = x + 1
        return y * 2, y[:10] * 2  # the second has 10 elements

    assert new_full_size_tensors(run, N) == {"arithmetic": 2, "copies": 0}
    to_double = new_full_size_tensors(lambda: x.to(torch.float64), N)
    assert to_double["copies"] == 1


def test_vectors_alive_at_peak_names_the_set_alive_together():
    x = torch.randn(N)

    def run():
        a = x + 1
        b = a * 2
        c = b * 3  # three alive together
        del a, b, c
        return x + 1  # one alive: not a new peak

    assert vectors_alive_at_peak(run, N) == {"add": 1, "mul": 2}


def test_replaced_swaps_for_the_block_only_and_refuses_a_missing_name():
    module = types.ModuleType("swapped")
    module.f = lambda: "original"
    with replaced(module, f=lambda: "swapped"):
        assert module.f() == "swapped"
    assert module.f() == "original"
    with pytest.raises(AttributeError, match="replaced: swapped has no g"):
        with replaced(module, g=lambda: None):
            pass


def test_simple_grad_variant_no_checks_silences_the_checks_then_restores_them():
    checks = simple_grad._require_tensor
    with simple_grad_variant("no checks"):
        assert simple_grad._require_tensor("not a tensor") is None
        assert not simple_grad._tracing
    assert simple_grad._require_tensor is checks
    assert simple_grad._tracing
    with pytest.raises(ValueError, match="simple_grad_variant: expected one of"):
        with simple_grad_variant("silent"):
            pass


def test_ratio_with_spread_gives_the_verdict_and_the_quartiles():
    samples = {"base": [1.0] * 8, "slow": [2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0]}
    comparison = Comparison(samples, "base")
    assert ratio_with_spread(comparison, "slow") == "~2.5x (~2x to ~3x)"
    samples["same"] = [0.9, 1.1] * 4
    assert ratio_with_spread(comparison, "same").startswith("~no measurable difference")
    with pytest.raises(ValueError, match="ratio_with_spread"):
        ratio_with_spread(comparison, "missing")
    # one call of "slow" against two of "base": the quartiles halve, and the verdict
    # is taken from the halved spread, which now reaches 1
    assert ratio_with_spread(comparison, "slow", over="base", scale=2) == (
        "~no measurable difference (~1x to ~1.5x)")


def test_print_comparison_puts_each_ratio_under_its_name(capsys):
    samples = {"base": [1e-3] * 8, "slow": [2e-3] * 4 + [3e-3] * 4}
    print_comparison(Comparison(samples, "base", cpu_seconds=samples))
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["base: ~1 ms", "slow: ~2.5 ms", "  ~2.5x (~2x to ~3x)"]
    assert lines[3].startswith("CPU time / wall time: ~")
    with pytest.raises(TypeError, match="print_comparison: expected a Comparison"):
        print_comparison(samples)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: count_calls(3), "count_calls: expected a function"),
        (lambda: python_calls(lambda: 0, kernels="torch._refs"), "python_calls: kernels"),
        (lambda: new_full_size_tensors(lambda: 0, 0), "new_full_size_tensors: size"),
        (lambda: vectors_alive_at_peak(lambda: 0, 2.5), "vectors_alive_at_peak: size"),
        (lambda: peaks_in_fresh_process([len], "", "0"), "peaks_in_fresh_process: functions"),
        (lambda: peaks_in_fresh_process([], None, "0"), "peaks_in_fresh_process: setup"),
    ],
)
def test_wrong_arguments_are_refused_by_name(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def double(x):
    return x * 2


@pytest.mark.skipif(sys.platform != "linux", reason="process_peak reads Linux's /proc")
def test_peaks_in_fresh_process_agree_on_a_large_vector():
    floats = 8 * 2**20  # 64 MiB in float64: above glibc's mmap threshold
    metered, by_the_system = peaks_in_fresh_process(
        [double], f"x = torch.ones({floats}, dtype=torch.float64)", "double(x)"
    )
    assert metered == floats * 8
    assert abs(by_the_system - metered) < 4 * 2**20
    with pytest.raises(RuntimeError, match="the process failed: NameError"):
        peaks_in_fresh_process([], "", "undefined_function()")
