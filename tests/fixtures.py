"""Functions and inputs that more than one test module checks."""
import torch


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
