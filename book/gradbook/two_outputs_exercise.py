"""The checker of Known zeros' exercise: one tape entry with two outputs, r = x * x and
s = x + x, whose rule must skip a known zero (``None``) instead of building zeros for it.

It lives here so that the chapter ends on the exercise, not on its bookkeeping. It prints one
verdict for the learner: the first thing wrong, in plain words, or "Correct".
"""
import contextlib

import torch

from .simple_grad import Variable, gradient_tape, grad, quiet_trace, reset_tape

_X_VALUE = (0.5, -1.0, 2.0)
_LOSSES = {  # the loss's name: the loss of (r, s); the same spelling for Variables and tensors
    "only r": lambda r, s: r.sum(),
    "only s": lambda r, s: s.sum(),
    "both": lambda r, s: (r * s).sum(),
}


@contextlib.contextmanager
def variables_made():
    """Collect every Variable created inside the block (on the tape or off it)."""
    made, plain_init = [], Variable.__init__

    def recording_init(self, *args, **kwargs):
        plain_init(self, *args, **kwargs)
        made.append(self)

    Variable.__init__ = recording_init
    try:
        yield made
    finally:
        Variable.__init__ = plain_init


def check_two_outputs(operator_square_and_double):
    """Print what is wrong with the learner's ``operator_square_and_double(x)``, or "Correct".

    Three checks, in order: the gradients of losses that read only r, only s and both agree
    with PyTorch's; the gradient of both can be differentiated again (it is built from
    Variables); and the entry's rule, handed a None for r, a None for s or neither, builds no
    Variable of zeros. Waste on raw tensors (``.value``) is not seen."""
    if not callable(operator_square_and_double):
        raise TypeError(
            "check_two_outputs: pass your function itself, "
            "check_two_outputs(operator_square_and_double), not a "
            f"{type(operator_square_and_double).__name__}."
        )
    x_value = torch.tensor(_X_VALUE, dtype=torch.float64)
    message = _first_order_problem(operator_square_and_double, x_value)
    if message is None:
        message = _zeros_built_for_none(operator_square_and_double, x_value)
    print(message or "Correct: right gradients for every loss, and no zeros built for a None.")


def _first_order_problem(operator, x_value):
    """The first wrong gradient, bad return or undifferentiable result, else None."""
    for name, loss_of in _LOSSES.items():
        x_t = x_value.clone().requires_grad_()
        (expected,) = torch.autograd.grad(loss_of(x_t * x_t, x_t + x_t), x_t)
        with quiet_trace():
            reset_tape()
            x = Variable.constant(x_value, name="x")
            try:
                outputs = operator(x)
            except Exception as error:
                return f"Calling your function on a Variable fails: {type(error).__name__}: {error}"
            if not (isinstance(outputs, tuple) and len(outputs) == 2
                    and all(isinstance(v, Variable) for v in outputs)):
                return "Return the two outputs, (r, s), as Variables."
            r, s = outputs
            if [entry.outputs for entry in gradient_tape] != [[r.name, s.name]]:
                return "Record exactly one TapeEntry, whose outputs are r and s."
            try:
                (got,) = grad(loss_of(r, s), [x])
            except Exception as error:
                return (f"With a loss of {name}, grad fails inside your propagate: "
                        f"{type(error).__name__}: {error}")
        if got is None or not torch.allclose(got.value, expected):
            return f"With a loss of {name}, the gradient is wrong."
    # the last loss read both: d/dx of sum((6x^2)^2) is 144x^3, if got is on the tape
    with quiet_trace():
        (second,) = grad((got * got).sum(), [x])
    if second is None or not torch.allclose(second.value, 144 * x_value**3):
        return ("The gradients are right but cannot be differentiated: build propagate's "
                "result from Variables (x and the incoming gradients), not from .value.")
    return None


def _zeros_built_for_none(operator, x_value):
    """The entry's rule with each pattern of known zeros, judged by what it makes: x and g
    hold no zero, so a Variable of zeros was built for a None (to stand in for it, or to add
    into). A message naming them, else None."""
    with quiet_trace():
        reset_tape()
        x = Variable.constant(x_value, name="x")
        operator(x)
        (entry,) = gradient_tape
        g = (x + x).sum().expand(3)  # some non-zero gradient, on the tape
        for pattern, dL_doutputs in (("a None for s", [g, None]),
                                     ("a None for r", [None, g]),
                                     ("both gradients", [g, g])):
            with variables_made() as made:
                entry.propagate(dL_doutputs)
            zeros = [v.name for v in made if not v.value.any()]
            if zeros:
                return (f"Given {pattern}, propagate builds a tensor of zeros "
                        f"({', '.join(zeros)}): it does work for the None (a tensor of "
                        "zeros, or an addition to one) instead of skipping it.")
    return None
