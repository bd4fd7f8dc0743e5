"""The exercise checker of Double backward fires on the mistakes it names.

The chapter's code cells run in order, then `check_log_cosh` is fed wrong answers and must
print the message written for each.
"""
import pytest
import torch

from fixtures import chapter_namespace, says


@pytest.fixture(scope="module")
def chapter():
    return chapter_namespace("double_backward.ipynb", "check_log_cosh")


def log_cosh_with(extra_term):
    """log(cosh x) and tanh x from one Function whose backward uses `extra_term(tanh x)`
    as the derivative of the second output."""

    class LogCoshAndTanh(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return torch.log(torch.cosh(x)), torch.tanh(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output[1])

        @staticmethod
        def backward(ctx, grad_out, grad_tanh):
            (tanh_x,) = ctx.saved_tensors
            return grad_out * tanh_x + grad_tanh * extra_term(tanh_x)

    return lambda x: LogCoshAndTanh.apply(x)[0]


@pytest.mark.timeout(300)
def test_check_log_cosh_names_each_mistake(chapter):
    check = chapter["check_log_cosh"]

    assert says(check, log_cosh_with(lambda t: 1 - t**2)).startswith("Right")

    forgotten = says(check, log_cosh_with(lambda t: 0 * t))  # grad_tanh dropped
    assert "a term is missing or wrong" in forgotten and "Right" not in forgotten

    # the term is there, with the wrong sign: the message must not say only "missing"
    wrong_sign = says(check, log_cosh_with(lambda t: 1 + t**2))
    assert "a term is missing or wrong" in wrong_sign and "Right" not in wrong_sign

    class SavesTanhOfItsOwn(torch.autograd.Function):  # an intermediate, no graph
        @staticmethod
        def forward(x):
            return torch.log(torch.cosh(x))

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.tanh_x = torch.tanh(inputs[0]).detach()

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out * ctx.tanh_x

    assert "cannot trace back to x" in says(check, SavesTanhOfItsOwn.apply)
