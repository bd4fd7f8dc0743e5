"""The exercise checker of Extending autograd fires on the mistakes it names.

The chapter's code cells run in order (as a reader who has run the chapter has them), then
the checker is fed wrong answers and must print the message written for each.
"""
import pytest
import torch

from fixtures import chapter_namespace, says


@pytest.fixture(scope="module")
def chapter():
    return chapter_namespace("extending_autograd.ipynb", "check_clip_with_mask")


@pytest.mark.timeout(120)
def test_check_clip_with_mask_names_each_mistake(chapter):
    check = chapter["check_clip_with_mask"]
    first = chapter["ClipWithMaskFirstAttempt"]

    # the mistake the exercise is written for: the mask left unmarked
    unmarked = says(check, first)
    assert "ctx.mark_non_differentiable(mask)" in unmarked
    assert "Right" not in unmarked

    class MarksClipped(first):  # the mark on the wrong output
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(*output)
            ctx.save_for_backward(output[1])

    assert "mark the mask only" in says(check, MarksClipped)

    class WrongSlope(chapter["ClipWithMask"]):  # slope 1 everywhere
        @staticmethod
        def backward(ctx, grad_clipped, grad_mask):
            return grad_clipped

    wrong_slope = says(check, WrongSlope)
    assert "torch.clamp's" in wrong_slope and "mark_non" not in wrong_slope

    class Combined(torch.autograd.Function):  # ctx in forward
        @staticmethod
        def forward(ctx, x):
            return x.clamp(-1, 1), (x.abs() < 1).to(x.dtype)

    assert "split style" in says(check, Combined)

    class BoolMask(chapter["ClipWithMask"]):  # torch.equal alone would pass it
        @staticmethod
        def forward(x):
            return x.clamp(-1, 1), x.abs() < 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])
            ctx.save_for_backward(output[1].to(inputs[0].dtype))

    assert "in x's dtype" in says(check, BoolMask)

    class MaskOnCtx(chapter["ClipWithMask"]):  # saved as an attribute of ctx
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])
            ctx.inside = output[1]

        @staticmethod
        def backward(ctx, grad_clipped, grad_mask):
            return grad_clipped * ctx.inside

    assert "kept on ctx (inside)" in says(check, MaskOnCtx)

    class ClosedMask(chapter["ClipWithMask"]):  # [-1, 1], not (-1, 1)
        @staticmethod
        def forward(x):
            return x.clamp(-1, 1), (x.abs() <= 1).to(x.dtype)

    closed = says(check, ClosedMask)
    assert "the interval is open" in closed and "Right" not in closed
    assert says(check, chapter["ClipWithMask"]).startswith("Right")


@pytest.mark.timeout(120)
def test_check_clip_with_mask_sees_a_float32_gradient(chapter):
    """A backward that computes in float32 passes every exact check on the powers of ten
    (float32 holds them), and autograd casts its gradient back to float64 silently: only the
    last digits differ."""
    check = chapter["check_clip_with_mask"]

    class Float32Gradient(chapter["ClipWithMask"]):
        @staticmethod
        def backward(ctx, grad_clipped, grad_mask):
            (inside,) = ctx.saved_tensors
            return (grad_clipped * inside).float()

    printed = says(check, Float32Gradient)
    assert "the last digits" in printed and "Right" not in printed
