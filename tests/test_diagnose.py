"""find_problems: each kind of broken Function gets its own plain-words verdict."""
import pytest
import torch

from fixtures import HiddenIntermediate, leaf
from gradbook import find_problems


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


class NotStatic(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    def backward(ctx, grad_out):  # the mistake under test: no @staticmethod
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


class NothingSaved(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


class WrongFormula(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return x * grad_out  # the factor 2 is missing


class WrongForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


class ForgetsToReturn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.sum() > 1e9:
            return x**2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out


class TooFewGradients(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_out):
        x, y = ctx.saved_tensors
        return grad_out * y


def square(x):
    return x**2


def test_a_correct_function_has_no_problems():
    assert find_problems(Square, square, leaf(3)) == []


def test_a_missing_staticmethod_is_named():
    problems = find_problems(NotStatic, square, leaf(3))
    assert len(problems) == 1
    assert problems[0].startswith("backward is not a @staticmethod")


def test_nothing_saved_is_explained():
    (problem,) = find_problems(NothingSaved, square, leaf(3))
    assert "ValueError" in problem
    assert "more tensors from ctx.saved_tensors than forward saved" in problem


def test_a_wrong_first_derivative_stops_before_the_second():
    (problem,) = find_problems(WrongFormula, square, leaf(3))
    assert problem.startswith("first derivatives")
    assert "finite differences" in problem


def test_a_forward_that_disagrees_with_the_reference():
    (problem,) = find_problems(WrongForward, square, leaf(3))
    assert "same values as the reference" in problem


def test_a_forward_without_return_is_caught():
    (problem,) = find_problems(ForgetsToReturn, square, leaf(3))
    assert problem.startswith("forward returned None")


def test_a_hidden_intermediate_fails_only_the_second_order():
    (problem,) = find_problems(HiddenIntermediate, square, leaf(3))
    assert problem.startswith("second derivatives")
    assert "kept on ctx" in problem


def test_a_missing_gradient_is_explained():
    (problem,) = find_problems(TooFewGradients, torch.mul, leaf(3), leaf(3))
    assert "one gradient per forward input" in problem


def test_an_instance_or_a_plain_function_is_refused():
    with pytest.raises(TypeError, match="Function class itself"):
        find_problems(Square.apply, square, leaf(3))


def test_float32_inputs_are_refused():
    with pytest.raises(TypeError, match="float64"):
        find_problems(Square, square, torch.rand(3, requires_grad=True))
