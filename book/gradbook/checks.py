"""Gradient checks and short error messages for the chapters."""
import contextlib
import textwrap

import torch
from torch.autograd import gradcheck, gradgradcheck


def check_gradients(function, *inputs):
    """Run ``gradcheck`` and ``gradgradcheck`` on ``function(*inputs)`` and report both.

    Each raises ``GradcheckError`` on a mismatch. The inputs must be float64 tensors that
    require grad: finite differences in float32 are too coarse to tell right from wrong.
    """
    _check_inputs(inputs)
    first_order = gradcheck(function, inputs)
    second_order = gradgradcheck(function, inputs)
    print(f"gradcheck: {first_order}, gradgradcheck: {second_order}")


def _check_inputs(inputs):
    if not inputs:
        raise TypeError("check_gradients: pass at least one input tensor after the function.")
    for position, tensor in enumerate(inputs):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(
                f"check_gradients: input {position} is a {type(tensor).__name__}, not a tensor."
            )
        if tensor.dtype != torch.float64:
            raise TypeError(
                f"check_gradients: input {position} is {tensor.dtype}; finite differences need "
                "float64. Create it with dtype=torch.float64 (or call .double())."
            )
        if not tensor.requires_grad:
            raise ValueError(
                f"check_gradients: input {position} does not require grad, so there is no "
                "gradient to check. Create it with requires_grad=True."
            )


@contextlib.contextmanager
def first_line_of_error(width=None):
    """Re-raise an error with only the first line of its message.

    Some errors, gradcheck's among them, append whole Jacobians to the line that says what
    went wrong; in a page that line is what the reader needs. With ``width`` (79 for the
    pages), that line is also wrapped so that no line of "ErrorType: message", as the page
    shows it, is longer than ``width``.
    """
    try:
        yield
    except Exception as error:
        lines = str(error).strip().splitlines()
        if width is not None and lines:
            # The page puts "ErrorType: " before the first line.
            prefix = " " * (len(type(error).__name__) + 2)
            wrapped = textwrap.fill(lines[0], width, initial_indent=prefix)
            error.args = (wrapped[len(prefix):],)
        elif len(lines) > 1:
            # Shorten the message in place: building a new exception of the same type would
            # fail for types whose constructor takes more than a message.
            error.args = (lines[0],)
        raise error.with_traceback(None) from None
