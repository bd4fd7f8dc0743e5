"""Say in plain words what is wrong with a custom autograd Function (for self-checking exercises)."""
import inspect

import torch
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

from .checks import _check_inputs

# Errors a broken backward typically raises, and what each usually means.
_HINTS = (
    ("not enough values to unpack", "backward unpacks more tensors from ctx.saved_tensors than forward saved"),
    ("incorrect number of gradients", "backward must return one gradient per forward input (None for a non-tensor one)"),
    ("invalid gradient at index", "a gradient does not have the shape of its input"),
    ("different than None", "the gradient of a non-tensor input must be None"),
)


def find_problems(function_class, reference, *inputs):
    """Return a list of plain-words problems with ``function_class``; an empty list means none found.

    ``reference`` computes the same mathematical function with ordinary PyTorch operations, and
    ``inputs`` are float64 tensors that require grad. The checks run in order: both methods are
    static, forward agrees with ``reference``, ``gradcheck``, then ``gradgradcheck``. A failing
    step stops the later ones, since their verdicts would only repeat it.
    """
    if not (isinstance(function_class, type) and issubclass(function_class, torch.autograd.Function)):
        raise TypeError(
            "find_problems: pass the Function class itself (a subclass of torch.autograd.Function), "
            f"not {type(function_class).__name__}; it calls .apply for you."
        )
    if not callable(reference):
        raise TypeError("find_problems: reference must be a function computing the expected result.")
    _check_inputs(inputs)

    problems = [
        f"{name} is not a @staticmethod: harmless on this PyTorch (.apply looks it up on the "
        "class and passes ctx first), but PyTorch documents forward and backward as static "
        "methods; add the decorator."
        for name in ("forward", "backward")
        if not isinstance(inspect.getattr_static(function_class, name, None), staticmethod)
    ]
    forward_problem = _forward_problem(function_class, reference, inputs)
    if forward_problem:
        return problems + [forward_problem]
    first_order = _check_problem(gradcheck, function_class.apply, inputs)
    if first_order:
        _, description = first_order
        return problems + [f"first derivatives: {description}"]
    second_order = _check_problem(gradgradcheck, function_class.apply, inputs)
    if second_order:
        disagrees, description = second_order
        if disagrees:
            description += (
                "; first derivatives are right, so backward most likely computes with a tensor "
                "autograd cannot trace to the inputs (kept on ctx, or an intermediate passed to "
                "save_for_backward)"
            )
        problems.append(f"second derivatives (double backward): {description}")
    return problems


def _forward_problem(function_class, reference, inputs):
    try:
        output = function_class.apply(*inputs)
    except Exception as error:
        return f"forward raised {_describe(error)}"
    if output is None:
        return "forward returned None: some path through it ends without a return statement"
    try:
        torch.testing.assert_close(output, reference(*inputs))
    except AssertionError:
        return "forward does not compute the same values as the reference"
    return None


def _check_problem(check, function, inputs):
    """None when ``check`` passes; otherwise (whether it disagreed with finite differences,
    a description), so that callers never have to parse the description."""
    try:
        check(function, inputs)
    except GradcheckError:
        return True, "they disagree with finite differences"
    except Exception as error:
        return False, f"backward raised {_describe(error)}"
    return None


def _describe(error):
    lines = str(error).strip().splitlines()
    first_line = lines[0] if lines else ""
    description = f"{type(error).__name__} ({first_line})"
    for fragment, hint in _HINTS:
        if fragment in first_line:
            return f"{description}: {hint}"
    return description
