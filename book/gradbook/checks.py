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


def _check_inputs(inputs, caller="check_gradients"):
    if not inputs:
        raise TypeError(f"{caller}: pass at least one input tensor after the function.")
    for position, tensor in enumerate(inputs):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(
                f"{caller}: input {position} is a {type(tensor).__name__}, not a tensor."
            )
        if tensor.dtype != torch.float64:
            raise TypeError(
                f"{caller}: input {position} is {tensor.dtype}; finite differences need "
                "float64. Create it with dtype=torch.float64 (or call .double())."
            )
        if not tensor.requires_grad:
            raise ValueError(
                f"{caller}: input {position} does not require grad, so there is no "
                "gradient to check. Create it with requires_grad=True."
            )


def first_line(error):
    """The first line of a caught error's message, for a cell that catches an error and goes on
    (``first_line_of_error`` is for a cell that the error ends)."""
    if not isinstance(error, BaseException):
        raise TypeError(
            f"first_line: pass the caught exception (``except ... as error``), not a "
            f"{type(error).__name__}."
        )
    message = _message_lines(error)
    return message[0] if message else ""


def _message_lines(error):
    return str(error).strip().splitlines()


@contextlib.contextmanager
def first_line_of_error(width=None, lines=1):
    """Re-raise an error with only the first line of its message (the first ``lines`` lines).

    Some errors, gradcheck's among them, append whole Jacobians to the line that says what
    went wrong; in a page that line is what the reader needs. A few, torch.compile's among
    them, spread the cause over the next lines: ``lines`` keeps those too. With ``width`` (79
    for a page), each kept line is also wrapped so that the error as IPython shows it,
    ``Type: line``, fits in that many columns instead of running off the right edge.

    The block is meant to fail: if it ends without an error (on another torch release, say),
    an AssertionError says so, so that a page never shows a call succeeding silently under
    prose that describes its error.
    """
    if isinstance(lines, bool) or not isinstance(lines, int) or lines < 1:
        raise ValueError(
            f"first_line_of_error: lines={lines!r}; pass how many lines of the message to "
            "keep, a whole number from 1 up."
        )
    try:
        yield
    except Exception as error:
        message = _message_lines(error)
        kept = message[:lines]
        if width is not None and kept:
            error.args = (_wrapped(kept, width, type(error).__name__),)
        elif len(kept) < len(message):
            # Shorten the message in place: building a new exception of the same type would
            # fail for types whose constructor takes more than a message.
            error.args = ("\n".join(kept),)
        raise error.with_traceback(None) from None
    raise AssertionError(
        "first_line_of_error: the block raised no error, where the page expects one; this "
        "torch release may behave differently from the one the page was run with."
    )


def _wrapped(lines, width, type_name):
    """The lines wrapped to `width` columns, the first after IPython's ``Type: `` prefix; a
    later line keeps its indentation, and its continuation rows are indented two more."""
    shown = f"{type_name}: "  # what IPython prints before the message
    rows = [textwrap.fill(lines[0], width, initial_indent=shown)[len(shown):]]
    for line in lines[1:]:
        indent = line[: len(line) - len(line.lstrip())]
        rows.append(
            textwrap.fill(line.strip(), width, initial_indent=indent, subsequent_indent=indent + "  ")
        )
    return "\n".join(rows)
