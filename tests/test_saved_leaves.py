import pytest
import torch

from gradbook import draw_graph
from gradbook.saved_leaves import (
    ORANGE_FILL,
    OUTLINED,
    outline_saved_leaf,
    outline_saved_leaves,
)


class SavesInput(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 + 0 * x


def saved_leaf_graph():
    x = torch.ones(2, requires_grad=True)
    out = SavesInput.apply(x)
    return draw_graph(out, params={"x": x, "out": out})


def test_saved_leaf_is_outlined():
    graph = outline_saved_leaves(saved_leaf_graph(), 1)
    assert ORANGE_FILL not in graph.svg
    assert graph.svg.count(OUTLINED) == 1


def test_wrong_count_raises_and_says_how_many():
    graph = saved_leaf_graph()
    with pytest.raises(ValueError, match="has 1 orange nodes, not 2"):
        outline_saved_leaves(graph, 2)
    assert ORANGE_FILL in graph.svg  # unchanged


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="expects a Graph"):
        outline_saved_leaves(torch.ones(1), 1)
    with pytest.raises(ValueError, match="an int >= 0"):
        outline_saved_leaves(saved_leaf_graph(), -1)


class TimesThree(torch.autograd.Function):
    """grad_output * 3x², saving both: the incoming gradient too."""

    @staticmethod
    def forward(grad_output, x):
        return grad_output * 3 * x**2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, x = ctx.saved_tensors
        return grad_grad * 3 * x**2, grad_grad * 6 * x * grad_output


class SavesInputAndGradient(torch.autograd.Function):
    """x³, whose backward is TimesThree: two orange boxes in the gradient's graph."""

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return TimesThree.apply(grad_output, x)


def test_one_named_saved_leaf_is_outlined_and_the_other_box_stays():
    x = torch.tensor(2.0, requires_grad=True)
    out = SavesInputAndGradient.apply(x)
    (grad_x,) = torch.autograd.grad(out, x, create_graph=True)
    graph = draw_graph((out, grad_x), params={"x": x, "out": out, "grad_x": grad_x})
    oranges = graph.svg.count(ORANGE_FILL)
    assert oranges == 2  # x and the saved incoming gradient
    outline_saved_leaf(graph, "x")
    assert graph.svg.count(ORANGE_FILL) == 1 and graph.svg.count(OUTLINED) == 1
    node_of_outlined = graph.svg[graph.svg.index(OUTLINED):]
    assert ">x</text>" in node_of_outlined[: node_of_outlined.index("</g>")]


def test_a_label_that_is_not_one_orange_node_raises():
    graph = saved_leaf_graph()
    with pytest.raises(ValueError, match="0 orange nodes labelled 'out'"):
        outline_saved_leaf(graph, "out")
    assert ORANGE_FILL in graph.svg  # unchanged
    with pytest.raises(TypeError, match="a str"):
        outline_saved_leaf(graph, 0)
