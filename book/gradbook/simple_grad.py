"""Simple Grad: a tape-based reverse-mode autodiff engine over torch tensors.

GENERATED FILE, do not edit. The code below is the `#@save` cells of
book/simple_grad_1_tape.ipynb, where it is explained; edit the chapter, then run
`python tools/export_saved_cells.py` (tests/test_simple_grad_export.py fails until you do).
"""

import contextlib
import functools
import itertools

import torch
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

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


def _require_one_gradient_per_input(entry, dL_dinputs):
    # grad pairs an entry's inputs with its rule's gradients by zip, which
    # would drop the unpaired ones without a word; the guard rails below run
    # this after every rule grad calls
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
            f"{rule} returned {len(dL_dinputs)} gradients for "
            f"{len(entry.inputs)} inputs: return one per input, in order "
            "(None for an input that gets none)."
        )


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
    # the operators then report it
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

    for entry in reversed(gradient_tape):
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


# Guard rails: each check says what was wrong and how to fix it, then gets out
# of the way. The end of this cell puts them around the engine's functions.
# First the bookkeeping they read.
# how many times reset_tape() ran: tells current values from stale ones
_tape_epoch = 0
_names_given = set()  # names chosen by the caller since the last reset_tape()
_serials = itertools.count()  # every Variable gets the next one, for life
# name -> serial of the one value that holds it on this tape (a number keeps
# no value alive, and outlives a value that was freed)
_serial_named: Dict[str, int] = {}
# name -> shape of that value: the tape keeps names only, and a gradient
# must have the shape of its input
_shape_named: Dict[str, tuple] = {}


def _mark_for_checks(variable):
    """Give a new Variable what the checks read: a serial number, which
    tells apart two values with one name, and the tape it was made on."""
    variable.serial = next(_serials)
    variable.epoch = _tape_epoch
    _require_one_value_per_name("a new value", variable)


def _require_tensor(value):
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"a Variable wraps a torch.Tensor, not a {type(value).__name__}: "
            f"pass torch.tensor({value!r}) instead."
        )


def _require_new_name(name):
    if not isinstance(name, str):
        raise TypeError(
            f"name={name!r}: a name is a str, such as 'a' or 'L0'."
        )
    # two values with one name would share one gradient, silently
    fresh = name[:1] == "v" and name[1:].isdigit()
    if fresh or name in _names_given:
        raise ValueError(
            f"the name {name!r} is "
            + ("the form of the engine's own names (v0, v1, ...)" if fresh
               else "already in use on this tape")
            + ": the tape files gradients by name, so two values with one "
            "name would share one gradient. Choose another name."
        )
    _names_given.add(name)


def _require_variables(where, *values, claim_names=True):
    for value in values:
        if not isinstance(value, Variable):
            raise TypeError(
                f"{where} got a {type(value).__name__} where a Variable was "
                "expected (a plain "
                "value is invisible to the tape): wrap it with "
                "Variable.constant(...) first."
            )
        if not hasattr(value, "serial"):  # made before these checks existed
            raise _not_on_tape(where, value.name)
        if not value.is_leaf and value.epoch != _tape_epoch:
            # its entry went with the old tape: used as an operand, it would
            # silently count as a constant
            raise _not_on_tape(where, value.name)
        if claim_names:
            _require_one_value_per_name(where, value)


def _not_on_tape(where, name):
    return ValueError(
        f"{where}: {name} is not on the tape. It was computed before the "
        "last reset_tape(), or by code that recorded no TapeEntry: compute "
        "it again after reset_tape(), with the engine's operators."
    )


def _require_one_value_per_name(where, value, claim=True):
    # a leaf kept across reset_tape() can meet a new value with its name (a
    # new leaf "a", or a fresh v0): refuse, or both would share one gradient.
    # The first value made or used under a name holds it until reset_tape(),
    # even once it is freed (as a value that only + or sum reads soon is).
    holder = _serial_named.get(value.name)
    if holder is None and claim:
        _serial_named[value.name] = value.serial
        _shape_named[value.name] = tuple(value.value.shape)
    elif holder is not None and holder != value.serial:
        raise ValueError(
            f"{where}: two different values are named {value.name!r} on "
            "this tape, and the tape files gradients by name. One was made "
            "before the last reset_tape(): make it again after "
            "reset_tape(), or give the other a new name."
        )


def _require_pointwise_operands(operator, lhs, rhs):
    _require_variables(f"operator {operator}", lhs, rhs)
    if lhs.value.shape != rhs.value.shape:
        raise ValueError(
            f"{lhs.name} {operator} {rhs.name}: the shapes "
            f"{tuple(lhs.value.shape)} and "
            f"{tuple(rhs.value.shape)} differ, and Simple Grad's operators "
            "do not broadcast. "
            "Make them equal first, e.g. with .expand(shape) on a scalar."
        )


def _as_shape(sizes):
    """expand's sizes as torch takes them (3, or 2, 3, or (2, 3))."""
    return torch.Size([sizes] if isinstance(sizes, int) else sizes)


def _require_scalar_to_expand(x, sizes):
    # Only checks, like every _require_ (Double backward at work times the
    # engine with all of them made no-ops): operator_expand builds the shape.
    _require_variables("expand", x)
    try:
        shape = _as_shape(sizes)
    except TypeError:
        raise TypeError(
            f"{x.name}.expand({sizes!r}): give the new shape as ints, as "
            f"in {x.name}.expand(3) or {x.name}.expand(2, 3)."
        ) from None
    if x.value.dim() != 0:
        raise ValueError(
            f"{x.name}.expand({', '.join(map(str, shape))}): only a scalar "
            "(0-dim) Variable "
            f"can be expanded, and {x.name} has shape "
            f"{tuple(x.value.shape)}. Call "
            f"{x.name}.sum() first, or expand a scalar."
        )


def _require_loss_and_results(L, desired_results):
    if isinstance(desired_results, Variable):
        raise TypeError(
            "grad takes a list of Variables: write grad(L, "
            f"[{desired_results.name}])."
        )
    _require_variables("grad", L, *desired_results, claim_names=False)
    if L.value.dim() != 0:
        raise ValueError(
            f"grad needs a scalar loss, and {L.name} has shape "
            f"{tuple(L.value.shape)}: "
            f"pass {L.name}.sum() (or another scalar computed from it) "
            "instead."
        )
    names_on_tape = {
        name
        for entry in gradient_tape
        for name in entry.inputs + entry.outputs
    }
    for x in [L, *desired_results]:
        computed_here = x.epoch == _tape_epoch and x.name in names_on_tape
        if not (x.is_leaf or computed_here):
            raise _not_on_tape("grad", x.name)
        _require_one_value_per_name("grad", x, claim=False)


# The checks, put around the engine's functions. Each wrapper looks its check
# up when it runs (a test can swap one out), and wraps the function as
# written (__wrapped__), so running this cell again adds no second check.
def _forget_names():
    """What reset_tape() also resets: no name in use, a new tape."""
    global _tape_epoch
    _names_given.clear()
    _serial_named.clear()
    _shape_named.clear()
    _tape_epoch += 1


def _require_gradient_shapes(entry, dL_dinputs):
    for name, gradient in zip(entry.inputs, dL_dinputs):
        shape = _shape_named.get(name)
        if not isinstance(gradient, Variable) or shape is None:
            continue  # a known zero, or a value made before these checks
        if tuple(gradient.value.shape) != shape:
            rule = "the rule of {} = f({})".format(
                ", ".join(entry.outputs), ", ".join(entry.inputs)
            )
            raise ValueError(
                f"{rule} returned a gradient of shape "
                f"{tuple(gradient.value.shape)} for {name}, of shape "
                f"{shape}: a gradient has the shape of its input."
            )


def _checked_rule_result(require_one_gradient_per_input):
    """grad's check of a rule's result, then the shapes of its gradients."""
    check = getattr(
        require_one_gradient_per_input, "__wrapped__",
        require_one_gradient_per_input,
    )

    @functools.wraps(check)
    def checked(entry, dL_dinputs):
        check(entry, dL_dinputs)  # a list, one gradient per input
        _require_gradient_shapes(entry, dL_dinputs)

    return checked


def _run_first(check, function):
    """function, with check(*its arguments) run before it."""
    function = getattr(function, "__wrapped__", function)

    @functools.wraps(function)
    def checked(*args, **kwargs):
        check(*args, **kwargs)
        return function(*args, **kwargs)

    return checked


def _checked_init(init):
    init = getattr(init, "__wrapped__", init)

    @functools.wraps(init)
    def checked_init(self, value, name=None):
        _require_tensor(value)
        if name is not None:
            _require_new_name(name)  # gradients are filed by name
        init(self, value, name)
        _mark_for_checks(self)  # reads the name init gave

    return checked_init


def _checked_grad(grad):
    grad = getattr(grad, "__wrapped__", grad)

    @functools.wraps(grad)
    def checked_grad(L, desired_results):
        if not isinstance(desired_results, Variable):
            desired_results = list(desired_results)  # a generator is read once
        _require_loss_and_results(L, desired_results)
        # while grad runs, every entry's rule checks its own result
        entries = list(gradient_tape)
        checked = [_checked_entry(entry) for entry in entries]
        gradient_tape[: len(entries)] = checked
        try:
            return grad(L, desired_results)
        finally:  # the tape gets its own entries back
            for i, (entry, swapped) in enumerate(zip(entries, checked)):
                if i < len(gradient_tape) and gradient_tape[i] is swapped:
                    gradient_tape[i] = entry

    return checked_grad


def _checked_entry(entry):
    """entry, with its rule's result checked as soon as the rule returns."""

    def propagate(dL_doutputs):
        dL_dinputs = entry.propagate(dL_doutputs)
        _require_one_gradient_per_input(entry, dL_dinputs)
        return dL_dinputs

    return entry._replace(propagate=propagate)


Variable.__init__ = _checked_init(Variable.__init__)
# _checked_entry looks _require_one_gradient_per_input up when it calls it
_require_one_gradient_per_input = _checked_rule_result(
    _require_one_gradient_per_input
)
reset_tape = _run_first(_forget_names, reset_tape)
grad = _checked_grad(grad)
operator_mul = _run_first(
    lambda lhs, rhs, name=None: _require_pointwise_operands("*", lhs, rhs),
    operator_mul,
)
operator_add = _run_first(
    lambda lhs, rhs: _require_pointwise_operands("+", lhs, rhs), operator_add
)
operator_sum = _run_first(
    lambda x, name=None: _require_variables("sum", x), operator_sum
)
operator_expand = _run_first(_require_scalar_to_expand, operator_expand)
operator_exp = _run_first(
    lambda x: _require_variables("exp", x), operator_exp
)
