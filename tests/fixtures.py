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
