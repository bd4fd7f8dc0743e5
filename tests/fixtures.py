"""Functions and inputs that more than one test module checks."""
import contextlib
import io
import linecache

import nbformat
import torch

from conftest import BOOK


class HiddenIntermediate(torch.autograd.Function):
    """Right first derivative, wrong second: the intermediate is kept off the graph."""

    @staticmethod
    def forward(ctx, x):
        ctx.doubled = 2 * x
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.doubled


def leaf(*shape, dtype=torch.float64):
    """A random input that requires grad, float64 unless told otherwise."""
    return torch.rand(*shape, dtype=dtype, requires_grad=True)


def tape_with_a_captured_orphan():
    """Simple Grad's tape after one entry whose rule reads `t`, a value made off the tape (the
    bug of Aggregate operators). Returns `t`."""
    from gradbook.simple_grad import TapeEntry, Variable, gradient_tape, quiet_trace, reset_tape

    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.tensor([1.0, 2.0]), name="a")
        t = Variable(a.value * 2)  # made without an entry: on no tape

        def propagate(dL_doutputs):
            return [dL_doutputs[0] * t]

        gradient_tape.append(TapeEntry(["a"], ["r"], propagate))
    return t


def chapter_namespace(chapter, defines):
    """The names a reader has after running all of `chapter`, solutions included.

    Magics (`%xmode`) are dropped, cells tagged raises-exception are skipped (their error is the
    point of the page, not a definition), and everything printed is swallowed.
    """
    notebook = nbformat.read(BOOK / chapter, as_version=4)
    namespace = {"display": lambda *args, **kwargs: None, "__name__": "chapter"}
    for index, cell in enumerate(notebook.cells):
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or "raises-exception" in tags or "remove-cell" in tags:
            continue
        source = "\n".join(
            line for line in cell.source.splitlines() if not line.startswith("%")
        )
        # kept where inspect.getsource finds it, as IPython keeps a cell's source
        filename = f"<{chapter}: cell {index}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, filename, "exec"), namespace)
    assert defines in namespace, f"{chapter} defines no {defines}"
    return namespace


def says(checker, answer):
    """What `checker(answer)` prints."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        checker(answer)
    return " ".join(printed.getvalue().split())  # one line, however it was wrapped
