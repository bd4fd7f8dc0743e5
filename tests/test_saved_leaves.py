import pytest
import torch

from gradbook import draw_graph
from gradbook.saved_leaves import ORANGE_FILL, OUTLINED, outline_saved_leaves


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
