"""What a computation costs, counted rather than timed: the instruments of Double backward at work.

Counts do not vary between runs, nor between machines with the same PyTorch and Python, so a
page can store them exactly; times (``gradbook.timing``) cannot.

``count_calls(run)`` sorts the ATen operator calls of ``run()`` into arithmetic on tensors that
hold numbers, the same operators run on meta tensors (shapes only), and all the others.
``python_calls(run)`` counts the Python functions entered, and those inside PyTorch's reference
implementations (the meta kernels). ``new_full_size_tensors`` and ``vectors_alive_at_peak``
count the vectors of a given size an operation makes, and which of them are alive together.
``peaks_in_fresh_process`` checks the live-bytes meter against the operating system.
``replaced`` and ``simple_grad_variant`` remove one cause at a time from the Simple Grad engine;
``keep_freed_memory`` keeps page faults out of a timing; ``print_comparison`` and
``ratio_with_spread`` write a ``Comparison`` in 79 columns.
"""

import collections
import contextlib
import inspect
import io
import json
import os
import subprocess
import sys
import textwrap
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .timing import Comparison, format_ratio, format_time

ARITHMETIC = frozenset({"add", "mul", "sum", "dot", "mv"})
REFERENCE_KERNELS = ("torch._refs", "torch._prims")


def _require_callable(run, caller):
    if not callable(run):
        raise TypeError(f"{caller}: expected a function to call, got {type(run).__name__}.")


def _require_size(size, caller):
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"{caller}: size must be a positive number of elements, got {size!r}.")


def _operator_name(operator):
    # aten.mul.Tensor and prims.mul.default are both named "mul.<overload>"
    return operator.__name__.split(".")[0]


def _holds_no_memory(tensor):
    return tensor.is_meta or tensor._is_zerotensor()


class OperatorCalls(TorchDispatchMode):
    """Counts operator calls: arithmetic ones (``arithmetic``, with the ``elements`` they read
    and write), the same operators on meta tensors (``on_meta``), and the others by name."""

    def __init__(self):
        super().__init__()
        self.arithmetic = 0
        self.on_meta = 0
        self.elements = 0
        self.others = collections.Counter()

    def __torch_dispatch__(self, operator, types, args=(), kwargs=None):
        result = operator(*args, **(kwargs or {}))
        if _operator_name(operator) not in ARITHMETIC:
            self.others[str(operator)] += 1
        elif any(isinstance(a, torch.Tensor) and a.is_meta for a in args):
            self.on_meta += 1
        else:
            self.arithmetic += 1
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            self.elements += sum(t.numel() for t in tensors + [result])
        return result

    @property
    def total(self):
        return self.arithmetic + self.on_meta + self.others.total()

    def as_row(self):
        """(arithmetic, on meta, others): the three columns of the chapter's table."""
        return self.arithmetic, self.on_meta, self.others.total()


def count_calls(run):
    """Run ``run()`` once under an ``OperatorCalls`` mode; return the mode with its counts."""
    _require_callable(run, "count_calls")
    with OperatorCalls() as counter:
        run()
    return counter


def python_calls(run, kernels=REFERENCE_KERNELS):
    """Python functions entered while ``run()`` runs: ``{"all": ..., "inside": ...}``, where
    "inside" counts those entered inside a module whose name starts with one of ``kernels``
    (PyTorch's reference implementations, which run the meta kernels), callees included.

    Python's profiling hook sees every Python function, also those that PyTorch's C++
    dispatcher calls back; it does not see C++ work."""
    _require_callable(run, "python_calls")
    if isinstance(kernels, str) or not all(isinstance(k, str) for k in kernels):
        raise TypeError(f"python_calls: kernels must be a tuple of module prefixes, got {kernels!r}.")
    kernels = tuple(kernels)
    counts = {"all": 0, "inside": 0}
    stack = []  # for each Python frame entered: is it inside a kernel?

    def hook(frame, event, arg):
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            inside = bool(stack and stack[-1]) or module.startswith(kernels)
            stack.append(inside)
            counts["all"] += 1
            counts["inside"] += inside
        elif event == "return" and stack:
            stack.pop()

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        run()
    finally:
        sys.setprofile(previous)
    return counts


class _FullSizeResults(TorchDispatchMode):
    """Counts the new tensors of ``size`` elements (not views) each operator makes."""

    def __init__(self, size):
        super().__init__()
        self.size, self.made = size, collections.Counter()

    def __torch_dispatch__(self, operator, types, args=(), kwargs=None):
        result = operator(*args, **(kwargs or {}))
        name = _operator_name(operator)
        if (
            isinstance(result, torch.Tensor)
            and not _holds_no_memory(result)
            and result.numel() == self.size
            and result._base is None  # a view makes no new memory
            and name not in ("alias", "detach", "expand")
        ):
            self.made["copies" if name == "_to_copy" else "arithmetic"] += 1
        return result


def new_full_size_tensors(run, size):
    """New tensors of ``size`` elements that ``run()`` makes, under a dispatch mode:
    ``{"arithmetic": ..., "copies": ...}`` (copies: made by ``_to_copy``). Meta tensors, zero
    tangents and the results of ``alias``, ``detach`` and ``expand`` hold no new memory and are
    not counted. Under a mode, in-place
    accumulations of the autograd engine run out of place: count those with
    ``gradbook.timing.calls_by_operator`` and subtract them for a plain run."""
    _require_callable(run, "new_full_size_tensors")
    _require_size(size, "new_full_size_tensors")
    with _FullSizeResults(size) as results:
        run()
    return {"arithmetic": results.made["arithmetic"], "copies": results.made["copies"]}


class _LiveVectors(TorchDispatchMode):
    """The new tensors of ``size`` elements alive, by the operator that made each, and the set
    alive when there were most."""

    def __init__(self, size):
        super().__init__()
        self.size, self.live, self.at_peak = size, {}, []

    def __torch_dispatch__(self, operator, types, args=(), kwargs=None):
        inputs = {
            id(t.untyped_storage())
            for t in tree_flatten((args, kwargs))[0]
            if torch.is_tensor(t) and not _holds_no_memory(t)
        }
        result = operator(*args, **(kwargs or {}))
        for tensor in tree_flatten(result)[0]:
            if not torch.is_tensor(tensor) or _holds_no_memory(tensor):
                continue
            if tensor.numel() != self.size:
                continue
            storage = tensor.untyped_storage()
            key = id(storage)
            if key in inputs or key in self.live:  # a view, or in place
                continue
            self.live[key] = _operator_name(operator)
            weakref.finalize(storage, self.live.pop, key, None)
        if len(self.live) > len(self.at_peak):
            self.at_peak = list(self.live.values())
        return result


def vectors_alive_at_peak(run, size):
    """The tensors of ``size`` elements alive together when ``run()`` held most of them, as a
    Counter of the operators that made them ({"mul": 7, "_to_copy": 3, ...})."""
    _require_callable(run, "vectors_alive_at_peak")
    _require_size(size, "vectors_alive_at_peak")
    with _LiveVectors(size) as vectors:
        run()
    return collections.Counter(vectors.at_peak)


_MEASURE_IN_FRESH_PROCESS = """
import json
import torch
from gradbook import live_bytes_peak
from gradbook.memory import process_peak

torch.set_num_threads(1)
{definitions}

{setup}

run = lambda: {call}
run()  # warm-up
metered, _ = live_bytes_peak(run)
print(json.dumps([metered, process_peak(run)]))
"""


def peaks_in_fresh_process(functions, setup, call):
    """Peak bytes of ``call`` (an expression) by the live-bytes meter and by the operating
    system (``gradbook.memory.process_peak``), in a fresh Python process: a clean C library
    heap. ``functions`` are copied into the process by their source, then ``setup`` (code)
    runs. Returns ``(metered, by_the_system)``. Linux only, like ``process_peak``."""
    if not isinstance(setup, str) or not isinstance(call, str):
        raise TypeError("peaks_in_fresh_process: setup and call must be source code strings, "
                        "e.g. setup='x = torch.randn(10**6)', call='f(x)'.")
    if isinstance(functions, dict) or not all(inspect.isfunction(f) for f in functions):
        raise TypeError("peaks_in_fresh_process: functions must be a list of functions defined "
                        "in Python (their source is copied into the new process).")
    definitions = "\n\n".join(textwrap.dedent(inspect.getsource(f)) for f in functions)
    script = _MEASURE_IN_FRESH_PROCESS.format(definitions=definitions, setup=setup, call=call)
    # the new process finds this gradbook wherever it runs from
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": path})
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"peaks_in_fresh_process: the process failed: {last}")
    metered, by_the_system = json.loads(result.stdout.strip().splitlines()[-1])
    return metered, by_the_system


@contextlib.contextmanager
def replaced(module, **functions):
    """Swap functions of a module for the block, and put them back after it: one cause
    removed. Every name must exist in the module already."""
    missing = [name for name in functions if not hasattr(module, name)]
    if missing:
        raise AttributeError(f"replaced: {module.__name__} has no {', '.join(missing)}; "
                             "only existing functions can be swapped.")
    saved = {name: getattr(module, name) for name in functions}
    vars(module).update(functions)
    try:
        yield
    finally:
        vars(module).update(saved)


def _trace_tensors_as_words(simple_grad):
    def trace(template, *values):
        if simple_grad._tracing:
            words = ["<tensor>" if torch.is_tensor(v) else v for v in values]
            print(template.format(*words) if words else template)
    return trace


SIMPLE_GRAD_VARIANTS = ("quiet", "no checks", "trace to a buffer", "buffer, no tensor text")


@contextlib.contextmanager
def simple_grad_variant(variant):
    """Run the Simple Grad engine in a block with one cause of its cost removed or added:
    "quiet" (no trace line built at all), "no checks" (quiet, and the engine's ``_require_*``
    argument checks made no-ops), "trace to a buffer" (the trace written to a buffer, not
    shown), "buffer, no tensor text" (the same, each tensor written as one word)."""
    from . import simple_grad

    if variant not in SIMPLE_GRAD_VARIANTS:
        raise ValueError(f"simple_grad_variant: expected one of {SIMPLE_GRAD_VARIANTS}, "
                         f"got {variant!r}.")
    with contextlib.ExitStack() as stack:
        if variant in ("quiet", "no checks"):
            stack.enter_context(simple_grad.quiet_trace())
        else:
            stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        if variant == "no checks":
            checks = {name: (lambda *args, **kwargs: None)
                      for name in vars(simple_grad) if name.startswith("_require_")}
            stack.enter_context(replaced(simple_grad, **checks))
        if variant == "buffer, no tensor text":
            stack.enter_context(replaced(simple_grad, trace=_trace_tensors_as_words(simple_grad)))
        yield


def keep_freed_memory():
    """From now on, for the rest of the process, glibc keeps freed memory in its heap (the
    largest mmap threshold, 32 MiB, and no trimming), so that a large temporary does not come
    back as fresh pages whose faults would be timed with the arithmetic. Returns True, or
    False without glibc (macOS), where nothing changes."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    if libc.mallopt(M_MMAP_THRESHOLD, 32 * 2**20) != 1 or libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1) != 1:
        raise RuntimeError("keep_freed_memory: glibc refused mallopt's settings.")
    return True


def ratio_with_spread(comparison, name, over=None, scale=1):
    """'~10.1x (~9.86x to ~10.9x)': ``name``'s verdict against the baseline (or against
    ``scale`` calls of ``over``), with the round-by-round interquartile range of the ratio."""
    if not isinstance(comparison, Comparison) or name not in comparison.samples:
        raise ValueError(f"ratio_with_spread: expected a Comparison and one of its names, "
                         f"got {type(comparison).__name__} and {name!r}.")
    low, _, high = comparison.ratio_quartiles(name, over, scale)
    verdict = comparison.verdict(name, over, scale)
    return f"{verdict} ({format_ratio(low)} to {format_ratio(high)})"


def print_comparison(comparison):
    """A Comparison's report narrow enough for a phone: each name with its median time and,
    on an indented line, its ratio to the baseline with the round-by-round interquartile range
    (``ratio_with_spread``); then the CPU share (about 1 on a quiet machine)."""
    if not isinstance(comparison, Comparison):
        raise TypeError(f"print_comparison: expected a Comparison, got {type(comparison).__name__}.")
    for name in comparison.samples:
        print(f"{name}: {format_time(comparison.quartiles(name)[1])}")
        if name != comparison.baseline:
            print("  " + ratio_with_spread(comparison, name))
    print(f"CPU time / wall time: {format_ratio(comparison.cpu_share())}")
