"""Simple Grad's guard rails: checks that stop a mistake with a message saying how to fix it.

Chapter 1 (book/simple_grad_1_tape.ipynb) builds and runs the engine without them, so that its
core reads in one sitting; its last `# @save` cell, near its end, calls
``install_guard_rails(globals())``, and the page that follows it
(book/simple_grad_guard_rails.ipynb, "The tape's guard rails") shows them at work. Each check says what was wrong and how to fix it, then gets
out of the way.

The functions below are written as if they were part of the engine: they read the engine's names
(Variable, gradient_tape, ...) and its bookkeeping (_tape_epoch, ...) as globals.
install_guard_rails runs copies of them whose globals are the engine's namespace, so that the
chapter's globals() and the module gradbook.simple_grad each get checks of their own, and a test
that swaps out one of the engine's ``_require_*`` checks (Double backward at work times the engine
with all of them made no-ops) reaches every caller. This file imports nothing from the engine.
"""
# ruff: noqa: F821 -- the engine's names are globals of the copies, not of this file;
# tests/test_simple_grad_guard_rails.py checks that every global they read is provided.
import functools
import itertools
import types

import torch

def _mark_for_checks(variable):
    """Give a new Variable what the checks read: a serial number, which
    tells apart two values with one name, and the tape it was made on."""
    variable.serial = next(_serials)
    variable.epoch = _tape_epoch
    _require_one_value_per_name("a new value", variable)


def _require_tensor(value):
    if isinstance(value, str):  # most often a name given where the value goes
        raise TypeError(
            f"a Variable wraps a torch.Tensor, not a str ({value!r}): a name "
            "goes after the value, as in Variable.constant(torch.tensor(2.0), "
            f"name={value!r})."
        )
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
        if value is None:  # most often a gradient that is a known zero
            raise TypeError(
                f"{where} got a NoneType where a Variable was expected: a "
                "gradient that is a known zero arrives as None; test for None "
                "before computing with it."
            )
        returned_by = _rule_of_tensor.get(id(value), (None, None))
        if returned_by[0] is value:  # a rule's gradient: not the caller's
            raise TypeError(
                f"{where} got a {type(value).__name__} returned by "
                f"{returned_by[1]}, where a Variable was expected: a rule must "
                "return Variables, computed with Variable operations, so that "
                "its gradients are on the tape and can be differentiated again."
            )
        if not isinstance(value, Variable):
            raise TypeError(
                f"{where} got a {type(value).__name__} where a Variable was "
                "expected (a plain value is invisible to the tape). An input "
                "of the program: wrap it with Variable.constant(...). A value "
                "computed from Variables, in a backward rule say: compute it "
                "with Variable operations, since a wrapped copy is a new leaf: "
                "no gradient would flow through it to the values it came from."
            )
        if not hasattr(value, "serial"):  # made before these checks existed
            when = "before the guard rails were installed"
            raise _not_on_tape(where, value.name, when)
        if not value.is_leaf and value.epoch != _tape_epoch:
            # its entry went with the old tape: used as an operand, it would
            # silently count as a constant
            raise _not_on_tape(where, value.name)
        if claim_names:
            _require_one_value_per_name(where, value)


def _not_on_tape(where, name, when="before the last reset_tape()"):
    # Only grad can also meet a value that no entry wrote (an operand made so
    # passes as a constant), so only grad's message names that cause.
    by_hand = ", or by code that recorded no TapeEntry" if where == "grad" else ""
    return ValueError(
        f"{where}: {name} is not on the tape. It was computed {when}"
        f"{by_hand}: compute it again after reset_tape(), with the engine's "
        "operators."
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
    if any(size < 0 for size in shape):  # torch's -1 ("keep") has no dim here
        raise ValueError(
            f"{x.name}.expand({', '.join(map(str, shape))}): give the new "
            "shape as ints, 0 or more: each is a number of elements, and "
            "a scalar has no size to keep."
        )
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
    if isinstance(desired_results, str):  # a name, not the Variable
        raise TypeError(
            "grad takes a list of Variables, not names: write grad(L, [x]) "
            f"with the Variable x named {desired_results!r}."
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
        # a plain tensor is checked too: returned for a leaf, it meets no
        # operator that would refuse it
        value = gradient.value if isinstance(gradient, Variable) else gradient
        if not isinstance(value, torch.Tensor) or shape is None:
            continue  # a known zero, or a value made before these checks
        if tuple(value.shape) != shape:
            rule = "the rule of {} = f({})".format(
                ", ".join(entry.outputs), ", ".join(entry.inputs)
            )
            raise ValueError(
                f"{rule} returned a gradient of shape "
                f"{tuple(value.shape)} for {name}, of shape "
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
        if not isinstance(desired_results, (Variable, str)):
            desired_results = list(desired_results)  # a generator is read once
        _require_loss_and_results(L, desired_results)
        # while grad runs, every entry's rule checks its own result
        entries = list(gradient_tape)
        checked = [_checked_entry(entry) for entry in entries]
        gradient_tape[: len(entries)] = checked
        try:
            return grad(L, desired_results)
        finally:  # the tape gets its own entries back
            _rule_of_tensor.clear()
            for i, (entry, swapped) in enumerate(zip(entries, checked)):
                if i < len(gradient_tape) and gradient_tape[i] is swapped:
                    gradient_tape[i] = entry

    return checked_grad


def _checked_entry(entry):
    """entry, with its rule's result checked as soon as the rule returns."""

    def propagate(dL_doutputs):
        dL_dinputs = entry.propagate(dL_doutputs)
        _require_one_gradient_per_input(entry, dL_dinputs)
        for gradient in dL_dinputs:  # so that a refusal can name this rule
            if isinstance(gradient, torch.Tensor):
                rule = "the rule of {} = f({})".format(
                    ", ".join(entry.outputs), ", ".join(entry.inputs)
                )
                _rule_of_tensor[id(gradient)] = (gradient, rule)
        return dL_dinputs

    return entry._replace(propagate=propagate)


def _put_around_the_engine():
    """Rebind the engine's functions to checked versions. Variable.__mul__ and
    the other methods look operator_mul etc. up when they are called, so
    `a * b` reaches the checked version."""
    global _require_one_gradient_per_input, reset_tape, grad
    global operator_mul, operator_add, operator_sum, operator_expand
    global operator_exp
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


# What the copies read from the engine's namespace (the engine defines them).
ENGINE_NAMES = (
    "Variable", "gradient_tape", "reset_tape", "grad",
    "_require_one_gradient_per_input", "operator_mul", "operator_add",
    "operator_sum", "operator_expand", "operator_exp",
)
# The functions copied into the engine's namespace, under their own names
# (the engine had them under these names when they were one of its cells).
_INSTALLED = (
    _mark_for_checks, _require_tensor, _require_new_name, _require_variables,
    _not_on_tape, _require_one_value_per_name, _require_pointwise_operands,
    _as_shape, _require_scalar_to_expand, _require_loss_and_results,
    _forget_names, _require_gradient_shapes, _checked_rule_result, _run_first,
    _checked_init, _checked_grad, _checked_entry,
)


def _in_namespace(function, namespace):
    """function, with namespace as its globals: the names it reads are looked
    up there, when it runs, and so are those of the functions it creates."""
    copy = types.FunctionType(
        function.__code__, namespace, function.__name__,
        function.__defaults__, function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__doc__ = function.__doc__
    copy.__qualname__ = function.__qualname__
    return copy


def _require_engine(engine):
    if not isinstance(engine, dict):
        raise TypeError(
            "install_guard_rails(engine): engine is the engine's namespace, a "
            f"dict such as globals(), not a {type(engine).__name__}."
        )
    missing = [name for name in ENGINE_NAMES if name not in engine]
    if missing:
        raise ValueError(
            "install_guard_rails(engine): the namespace has no "
            f"{', '.join(missing)}. Pass globals() of the engine's module "
            "(or chapter), after the engine's functions are defined."
        )


def install_guard_rails(engine):
    """Put the checks around the Simple Grad engine whose namespace (its
    globals()) is engine. Running it again replaces the checks, adding none:
    each wrapper wraps the function as written (__wrapped__)."""
    _require_engine(engine)
    # the copies read these modules as globals: the same module objects as
    # the engine's own, if it imported them
    engine.update(torch=torch, functools=functools)
    # First the bookkeeping the checks read.
    # how many times reset_tape() ran: tells current values from stale ones
    engine["_tape_epoch"] = 0
    # names chosen by the caller since the last reset_tape()
    engine["_names_given"] = set()
    # every Variable gets the next one, for life
    engine["_serials"] = itertools.count()
    # name -> serial of the one value that holds it on this tape (a number
    # keeps no value alive, and outlives a value that was freed)
    engine["_serial_named"] = {}
    # name -> shape of that value: the tape keeps names only, and a gradient
    # must have the shape of its input
    engine["_shape_named"] = {}
    # id -> (tensor, rule) for a plain tensor a rule returned while grad runs,
    # so that where it meets a Variable the refusal names that rule
    engine["_rule_of_tensor"] = {}
    for function in _INSTALLED:
        engine[function.__name__] = _in_namespace(function, engine)
    _in_namespace(_put_around_the_engine, engine)()
