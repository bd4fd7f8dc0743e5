"""record_calls and draw_calls: who calls which method of a Function, and what ctx holds."""
import pytest
import torch

from fixtures import leaf
from gradbook.function_calls import Call, draw_calls, record_calls


class ScaleSplit(torch.autograd.Function):
    """x * factor, split style: saves x, keeps the factor as an attribute."""

    @staticmethod
    def forward(x, factor):
        return x * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, factor = inputs
        ctx.save_for_backward(x)
        ctx.factor = factor

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.factor, None


class ScaleCombined(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_backward(x)
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.factor, None


class ExpSavesOutput(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class SinhSavesIntermediate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(torch.cosh(x))
        return torch.sinh(x)

    @staticmethod
    def backward(ctx, grad_output):
        (cosh,) = ctx.saved_tensors
        return grad_output * cosh


def test_the_split_style_calls_forward_then_setup_context_then_backward():
    x = leaf(3)
    calls = record_calls(ScaleSplit, {"x": x, "factor": 2.5})
    assert [c.method for c in calls] == ["forward", "setup_context", "backward"]
    assert [c.grad_enabled for c in calls] == [False, False, False]
    forward, setup_context, backward = calls
    assert forward.received == ["x", "factor"]  # no ctx
    assert setup_context.received == ["ctx", "inputs", "output"]
    assert (setup_context.saved, setup_context.attributes) == (["x"], ["factor"])
    assert backward.returned == ["grad_x", "None"]
    assert x.grad is None  # the record leaves the caller's .grad alone


def test_the_combined_style_fills_ctx_in_forward():
    calls = record_calls(ScaleCombined, {"x": leaf(3), "factor": 2.5})
    assert [c.method for c in calls] == ["forward", "backward"]
    assert calls[0].received == ["ctx", "x", "factor"]
    assert (calls[0].saved, calls[0].attributes) == (["x"], ["factor"])


def test_a_saved_output_and_a_saved_intermediate_are_named_as_such():
    (_, setup_context, _) = record_calls(ExpSavesOutput, {"x": leaf(3)})
    assert setup_context.saved == ["output"]
    (forward, _) = record_calls(SinhSavesIntermediate, {"x": leaf(3)})
    assert forward.saved == ["an intermediate"]


def test_the_drawing_says_who_fills_ctx_and_who_reads_it():
    graph = draw_calls(record_calls(ScaleSplit, {"x": leaf(3), "factor": 2.5}),
                       title="ScaleSplit.apply")
    assert "forward (grad mode off), then setup_context (grad mode off)" in graph.description
    assert "setup_context fills ctx (saved: x; attributes: factor)" in graph.description
    assert "returns grad_x, None" in graph.description
    assert "ScaleSplit.apply(x, factor)" in graph.svg
    assert [c.method for c in graph.calls] == ["forward", "setup_context", "backward"]


def test_backward_runs_with_grad_mode_as_create_graph_says_and_the_drawing_says_so():
    for create_graph in (False, True):
        calls = record_calls(ScaleSplit, {"x": leaf(3), "factor": 2.5}, create_graph=create_graph)
        assert [c.grad_enabled for c in calls] == [False, False, create_graph]
        graph = draw_calls(calls)
        assert f"backward (grad mode {'on' if create_graph else 'off'})" in graph.description
        # the rule holds for torch.autograd's engine, and the drawing says so
        assert "(autograd.grad:" in graph.svg and "= create_graph)" in graph.svg


def test_wrong_arguments_are_refused_with_a_reason():
    with pytest.raises(TypeError, match="create_graph must be True or False"):
        record_calls(ScaleSplit, {"x": leaf(3), "factor": 2.5}, create_graph="yes")
    with pytest.raises(TypeError, match="Function class itself"):
        record_calls(ScaleSplit.apply, {"x": leaf(3), "factor": 2.5})
    with pytest.raises(TypeError, match="dict from a name"):
        record_calls(ScaleSplit, (leaf(3), 2.5))
    with pytest.raises(ValueError, match="requires grad"):
        record_calls(ScaleSplit, {"x": torch.rand(3), "factor": 2.5})
    with pytest.raises(TypeError, match="list that record_calls returns"):
        draw_calls([])
    with pytest.raises(ValueError, match="exactly one call to backward"):
        draw_calls([Call("forward", False, ["x"])])
