"""Simple Grad: a tape-based reverse-mode autodiff engine over torch tensors.

GENERATED FILE, do not edit. The code below is the `#@save` cells of
book/simple_grad_1_tape.ipynb, where it is explained; edit the chapter, then run
`python tools/export_saved_cells.py` (tests/test_simple_grad_export.py fails until you do).
"""

import contextlib

import torch
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

from gradbook.simple_grad_guard_rails import install_guard_rails

_next_index = 0  # the number in the next fresh name


def fresh_name() -> str:
    """A new name for an intermediate value: v0, v1, v2, ..."""
    global _next_index
    name = f"v{_next_index}"
    _next_index += 1
    return name


# The engine's tools: its trace, and a fresh tape.
_tracing = True  # False inside quiet_trace()


def trace(template: str, *values):
    """Print template.format(*values) as one line of the engine's trace.

    The line is built only when it is printed: under quiet_trace() a call costs
    a test of one flag, however large the tensors in `values` are.
    """
    if _tracing:
        print(template.format(*values) if values else template)


@contextlib.contextmanager
def quiet_trace():
    """Run a block without printing the trace; the tape records as usual."""
    global _tracing
    previous, _tracing = _tracing, False
    try:
        yield
    finally:
        _tracing = previous


def reset_tape():
    """Forget every recorded operation and start the names again at v0."""
    global _next_index
    gradient_tape.clear()
    _next_index = 0


class Variable:
    """A tensor with a name, so that the tape can refer to it."""

    def __init__(self, value: torch.Tensor, name: Optional[str] = None):
        self.value = value
        self.name = fresh_name() if name is None else name
        self.is_leaf = False  # True only for values made by Variable.constant

    @staticmethod
    def constant(
        value: torch.Tensor, name: Optional[str] = None
    ) -> "Variable":
        """A leaf: a value that enters the program from outside (an input)."""
        leaf = Variable(value, name)
        leaf.is_leaf = True
        trace("{} = {}", leaf.name, value)
        return leaf

    def __repr__(self):
        return repr(self.value)

    def __mul__(self, rhs: "Variable") -> "Variable":
        return operator_mul(self, rhs)

    def __add__(self, rhs: "Variable") -> "Variable":
        return operator_add(self, rhs)

    # __rmul__ and __radd__ are only reached when lhs is not a Variable:
    # the guard rails (installed at the end of this page) then report it
    def __rmul__(self, lhs):
        return operator_mul(lhs, self)

    def __radd__(self, lhs):
        return operator_add(lhs, self)

    def sum(self, name: Optional[str] = None) -> "Variable":
        return operator_sum(self, name)

    def expand(self, *sizes) -> "Variable":  # expand(2, 3) or expand((2, 3))
        return operator_expand(self, sizes[0] if len(sizes) == 1 else sizes)

    def exp(self) -> "Variable":
        return operator_exp(self)


class TapeEntry(NamedTuple):
    inputs: List[str]  # names of the values the operation read
    outputs: List[str]  # names of the values it wrote
    # maps dL/d(outputs) to dL/d(inputs), one Variable (or None) per name
    propagate: Callable[[List[Optional[Variable]]], List[Optional[Variable]]]


gradient_tape: List[TapeEntry] = []


def operator_mul(
    lhs: Variable, rhs: Variable, name: Optional[str] = None
) -> Variable:
    # forward: compute the value and say what was computed
    r = Variable(lhs.value * rhs.value, name)
    trace("{} = {} * {}", r.name, lhs.name, rhs.name)

    # backward: r = lhs * rhs elementwise, so dr/dlhs = rhs and dr/drhs = lhs.
    # The closure keeps lhs and rhs alive: they are the values saved for
    # backward.
    def propagate(dL_doutputs: List[Variable]) -> List[Variable]:
        (dL_dr,) = dL_doutputs
        dL_dlhs = dL_dr * rhs
        dL_drhs = dL_dr * lhs
        return [dL_dlhs, dL_drhs]

    gradient_tape.append(TapeEntry([lhs.name, rhs.name], [r.name], propagate))
    return r


def grad(
    L: Variable, desired_results: Sequence[Variable]
) -> List[Optional[Variable]]:
    """dL/dX for each X in desired_results; None if no gradient reaches X."""
    # dL_d[name] is dL/d(name) so far; the walk starts from dL/dL = 1
    dL_d: Dict[str, Variable] = {L.name: Variable(torch.ones_like(L.value))}
    trace("d{} ------------------------", L.name)

    def gather(names):
        # a name with no entry yet has received no gradient: a known zero, None
        return [dL_d.get(name) for name in names]

    # a snapshot of the tape: the rules below record entries as they run,
    # and the walk is over the entries that were there when it began
    for entry in reversed(list(gradient_tape)):
        dL_doutputs = gather(entry.outputs)
        if all(g is None for g in dL_doutputs):
            continue  # zero in, zero out: no need to run propagate
        dL_dinputs = entry.propagate(dL_doutputs)
        # every use of a value contributes to its gradient; the contributions
        # add up
        for name, contribution in zip(entry.inputs, dL_dinputs):
            if contribution is None:
                # a known-zero contribution (a propagate may return None) adds
                # nothing
                continue
            if name in dL_d:
                dL_d[name] = dL_d[name] + contribution
            else:
                dL_d[name] = contribution

    for name, gradient in dL_d.items():
        trace("d{}_d{} = {}", L.name, name, gradient.name)
    trace("------------------------")
    return gather(x.name for x in desired_results)


def operator_add(lhs: Variable, rhs: Variable) -> Variable:
    r = Variable(lhs.value + rhs.value)
    trace("{} = {} + {}", r.name, lhs.name, rhs.name)

    # dr/dlhs = dr/drhs = 1: both inputs receive dL/dr unchanged, at no cost
    def propagate(dL_doutputs: List[Variable]) -> List[Variable]:
        (dL_dr,) = dL_doutputs
        return [dL_dr, dL_dr]

    gradient_tape.append(TapeEntry([lhs.name, rhs.name], [r.name], propagate))
    return r


def operator_sum(x: Variable, name: Optional[str] = None) -> Variable:
    r = Variable(x.value.sum(), name)
    trace("{} = {}.sum()", r.name, x.name)
    shape = x.value.shape  # the closure keeps this, not x and its storage

    # every element of x adds to r with weight 1: dL/dx is dL/dr copied to x's
    # shape
    def propagate(dL_doutputs: List[Variable]) -> List[Variable]:
        (dL_dr,) = dL_doutputs
        return [dL_dr.expand(shape)]

    gradient_tape.append(TapeEntry([x.name], [r.name], propagate))
    return r


def operator_expand(x: Variable, sizes) -> Variable:
    r = Variable(x.value.expand(sizes))
    shape = ", ".join(map(str, r.value.shape))
    trace("{} = {}.expand({})", r.name, x.name, shape)

    # every element of r is a copy of the scalar x: dL/dx adds up all of dL/dr
    def propagate(dL_doutputs: List[Variable]) -> List[Variable]:
        (dL_dr,) = dL_doutputs
        return [dL_dr.sum()]

    gradient_tape.append(TapeEntry([x.name], [r.name], propagate))
    return r


def operator_exp(x: Variable) -> Variable:
    r = Variable(x.value.exp())
    trace("{} = {}.exp()", r.name, x.name)

    # d exp(x)/dx = exp(x): the rule reuses the output r, a Variable the
    # tape knows, so its gradient can be differentiated again
    def propagate(dL_doutputs: List[Variable]) -> List[Variable]:
        (dL_dr,) = dL_doutputs
        return [dL_dr * r]

    gradient_tape.append(TapeEntry([x.name], [r.name], propagate))
    return r


# The guard rails. They run this check after every rule grad calls: grad
# pairs an entry's inputs with its rule's gradients by zip, which would drop
# the unpaired ones without a word.
def _require_one_gradient_per_input(entry, dL_dinputs):
    rule = "the rule of {} = f({})".format(
        ", ".join(entry.outputs), ", ".join(entry.inputs)
    )
    if not isinstance(dL_dinputs, (list, tuple)):
        raise TypeError(
            f"{rule} returned a {type(dL_dinputs).__name__}: return a list "
            "with one gradient per input."
        )
    if len(dL_dinputs) != len(entry.inputs):
        raise ValueError(
            f"{rule} returned {_count(len(dL_dinputs), 'gradient')} for "
            f"{_count(len(entry.inputs), 'input')}: return one per input, in "
            "order (None for an input that gets none)."
        )


def _count(number, noun):
    """'1 gradient', '2 gradients': a count, its noun in the right number."""
    return f"{number} {noun}" + ("" if number == 1 else "s")


install_guard_rails(globals())  # checked versions of the engine's functions


# grad without its own checks (the operators keep theirs), for a page that
# shows what a check prevents (seed_and_forward_mode: a vector loss)
unchecked_grad = grad.__wrapped__
