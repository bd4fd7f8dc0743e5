"""find_problems: each kind of broken Function gets its own plain-words verdict."""
import pytest
import torch

from fixtures import HiddenIntermediate, leaf
from torch.autograd.function import once_differentiable
from gradbook import find_problems
from gradbook.diagnose import penalty_problems


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
    kept, second = find_problems(HiddenIntermediate, square, leaf(3))
    assert kept.startswith("tensors that change with the inputs kept on ctx as attributes (doubled)")
    assert second.startswith("second derivatives")
    assert "kept on ctx" in second


class ReluMasksInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_out[x < 0] = 0  # writes into autograd's tensor
        return grad_out


class SquareKeptOnCtx(Square):
    @staticmethod
    def forward(ctx, x):
        ctx.kept = x  # an input as an attribute: gradcheck cannot see it
        ctx.save_for_backward(x)
        return x**2


def test_a_write_into_grad_output_is_named():
    x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    problems = find_problems(ReluMasksInPlace, torch.relu, x)
    assert any("writes into grad_output" in p for p in problems)


def test_a_tensor_kept_on_ctx_is_named():
    (problem,) = find_problems(SquareKeptOnCtx, torch.square, leaf(3))
    assert problem.startswith("tensors that change with the inputs kept on ctx as attributes (kept)")


class ExpCachedInList(torch.autograd.Function):
    """exp(x), its derivative kept in a list on ctx: hidden from the attribute scan's first level."""

    @staticmethod
    def forward(x):
        return torch.exp(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.cache = [torch.exp(inputs[0])]  # computed with grad off: no history

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.cache[0]


class ExpInputInDict(ExpCachedInList):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.parts = {"input": inputs[0], "scale": 2}

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * torch.exp(ctx.parts["input"])


def test_a_tensor_in_a_list_on_ctx_is_named_and_said_to_lack_history():
    problems = find_problems(ExpCachedInList, torch.exp, leaf(3))
    kept = [p for p in problems if "kept on ctx" in p]
    assert kept and kept[0].startswith(
        "tensors that change with the inputs kept on ctx as attributes (cache[0])")
    assert "cache[0] has no history" in kept[0]


def test_a_tensor_in_a_dict_on_ctx_is_named():
    (problem,) = find_problems(ExpInputInDict, torch.exp, leaf(3))
    assert "kept on ctx as attributes (parts['input'])" in problem
    assert "no history" not in problem  # an input requires grad: it has history


def test_a_missing_gradient_is_explained():
    (problem,) = find_problems(TooFewGradients, torch.mul, leaf(3), leaf(3))
    assert "one gradient per forward input" in problem


def test_an_instance_or_a_plain_function_is_refused():
    with pytest.raises(TypeError, match="Function class itself"):
        find_problems(Square.apply, square, leaf(3))


def test_float32_inputs_are_refused():
    with pytest.raises(TypeError, match="float64"):
        find_problems(Square, square, torch.rand(3, requires_grad=True))


# penalty_problems: a gradient penalty through the reader's Function


class SinhRecomputed(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sinh(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.cosh(x)


class SinhCoshOnCtx(SinhRecomputed):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.cosh = torch.cosh(inputs[0])  # the mistake: computed outside any graph

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.cosh


class SinhNumpyBackward(SinhRecomputed):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.from_numpy(grad_out.detach().numpy() * torch.cosh(x).detach().numpy())


class SinhWrongSlope(SinhRecomputed):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sinh(x)


def test_a_right_function_has_no_penalty_problem():
    assert penalty_problems(SinhRecomputed.apply, torch.sinh, leaf(3)) == []


def test_a_tensor_on_ctx_gives_a_silently_wrong_penalty():
    (problem,) = penalty_problems(SinhCoshOnCtx.apply, torch.sinh, leaf(3))
    assert problem.startswith("second derivatives: the penalty's gradient is wrong")
    assert "kept on ctx" in problem


def test_a_numpy_backward_gives_a_silently_wrong_penalty():
    # its first derivative has no graph: the penalty is a constant to the outer call
    (problem,) = penalty_problems(SinhNumpyBackward.apply, torch.sinh, leaf(3))
    assert problem.startswith("second derivatives: the penalty's gradient is wrong")
    assert "NumPy" in problem


def test_a_once_differentiable_backward_is_named_among_the_causes():
    class SinhOnce(SinhRecomputed):  # the right backward, declared once differentiable
        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * torch.cosh(x)

    (problem,) = penalty_problems(SinhOnce.apply, torch.sinh, leaf(3))
    assert problem.startswith("second derivatives")
    assert "once_differentiable" in problem and ".detach()" in problem


def test_a_wrong_first_derivative_is_reported_first():
    (problem,) = penalty_problems(SinhWrongSlope.apply, torch.sinh, leaf(3))
    assert problem.startswith("first derivatives")


def test_wrong_values_are_reported():
    (problem,) = penalty_problems(torch.cosh, torch.sinh, leaf(3))
    assert "values differ" in problem


def test_penalty_problems_refuses_float32_and_non_functions():
    with pytest.raises(TypeError, match="float64"):
        penalty_problems(torch.sinh, torch.sinh, torch.rand(3, requires_grad=True))
    with pytest.raises(TypeError, match="reference function"):
        penalty_problems(torch.sinh, None, leaf(3))


# In-place forwards: find_problems works on copies and names a missing mark_dirty


class DoubleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)  # the mistake under test: no ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        return 2 * grad_out


class DoubleInPlaceMarked(DoubleInPlace):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x


def double(x):
    return 2 * x


def test_the_callers_input_is_left_unchanged():
    x = leaf(3)
    before = x.detach().clone()
    find_problems(DoubleInPlace, double, x)
    find_problems(DoubleInPlaceMarked, double, x)
    assert torch.equal(x.detach(), before)


def test_a_missing_mark_dirty_is_named():
    (problem,) = find_problems(DoubleInPlace, double, leaf(3))
    assert problem.startswith("forward changes its input in place without ctx.mark_dirty")


def test_a_marked_in_place_function_has_no_problems():
    assert find_problems(DoubleInPlaceMarked, double, leaf(3)) == []


class Relu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (x > 0)


def test_an_input_at_a_kink_is_named_as_the_likely_cause():
    # finite differences at 0 give 0.5, the mean of the slopes on both sides
    at_kink = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64, requires_grad=True)
    (problem,) = find_problems(Relu, torch.relu, at_kink)
    assert problem.startswith("first derivatives: they disagree with finite differences")
    assert "agrees with the reference's gradient" in problem
    away = torch.tensor([-1.0, 0.5, 1.0], dtype=torch.float64, requires_grad=True)
    assert find_problems(Relu, torch.relu, away) == []


def test_the_callers_random_state_is_left_unchanged():
    x = leaf(3)
    state = torch.random.get_rng_state()
    find_problems(HiddenIntermediate, square, x)  # gradgradcheck draws random gradients
    assert torch.equal(torch.random.get_rng_state(), state)


# Verdicts that must not depend on a lucky probe or input


class SquareIgnoresGradOut(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x  # the mistake under test: grad_out is dropped


class Abs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.abs()

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sign(x)


class ScaleByConstant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.weights = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)  # depends on nothing
        return x * ctx.weights

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.weights


class Power(torch.autograd.Function):
    @staticmethod
    def forward(ctx, base, exponent):
        ctx.save_for_backward(base)
        ctx.exponent = exponent
        return base**exponent

    @staticmethod
    def backward(ctx, grad_out):
        (base,) = ctx.saved_tensors
        return grad_out * ctx.exponent * base ** (ctx.exponent - 1), None


def test_a_backward_that_ignores_grad_output_is_not_called_a_kink():
    # with a .sum() loss grad_out is all ones, so only a random incoming gradient tells
    (problem,) = find_problems(SquareIgnoresGradOut, square, leaf(4))
    assert problem.startswith("first derivatives: they disagree with finite differences")
    assert "jumps" not in problem


def test_a_right_abs_at_zero_is_named_as_a_kink_of_the_first_derivative():
    at_kink = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64, requires_grad=True)
    (problem,) = find_problems(Abs, torch.abs, at_kink)
    assert problem.startswith("second derivatives (double backward): they disagree")
    assert "first derivative jumps" in problem and "kept on ctx" not in problem


def test_a_write_into_grad_output_is_named_whatever_the_input():
    # the mask selects nothing for positive inputs, yet the write is still a write
    positive = torch.tensor([0.3, 0.5, 1.5], dtype=torch.float64, requires_grad=True)
    problems = find_problems(ReluMasksInPlace, torch.relu, positive)
    assert any(p.startswith("backward writes into grad_output") for p in problems)
    assert any("writes into grad_output, which requires grad" in p for p in problems)


def test_a_constant_on_ctx_is_not_a_problem():
    assert find_problems(ScaleByConstant, lambda t: t * torch.tensor([1.0, 2.0, 3.0]).double(),
                         leaf(3)) == []


def test_a_non_tensor_argument_is_passed_through():
    assert find_problems(Power, torch.pow, leaf(3), 3) == []
    with pytest.raises(TypeError, match="find_problems: pass at least one input tensor"):
        find_problems(Power, torch.pow, 2.0, 3)


def test_a_penalty_that_agrees_while_gradgradcheck_fails_says_so():
    # a right Abs at 0: the penalty agrees, finite differences of sign(x) do not
    at_kink = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64, requires_grad=True)
    (problem,) = penalty_problems(Abs.apply, torch.abs, at_kink)
    assert problem.startswith("second derivatives: gradgradcheck fails")
    assert "agrees with the reference's" in problem and "jumps" in problem


class SquareDetachesGradOut(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out.detach()  # cuts the incoming gradient off from autograd


class SigmoidNumpyGradOut(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.sigmoid(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        through_numpy = torch.from_numpy(grad_out.detach().numpy().copy())
        return through_numpy * result * (1 - result)


class SquareFloat32Gradient(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return (2 * x * grad_out).float()  # float32 for a float64 input


class SquareInputOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x  # the input itself: it has history
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        return 2 * ctx.x * grad_out


class ExpOutputOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.result = result  # the output itself: it has history once apply returns
        return result

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.result


@pytest.mark.parametrize("function_class, reference", [
    (SquareDetachesGradOut, square),
    (SigmoidNumpyGradOut, torch.sigmoid),
])
def test_a_backward_that_cuts_off_grad_output_is_not_called_a_kink(function_class, reference):
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    (problem,) = find_problems(function_class, reference, x)
    assert problem.startswith("second derivatives (double backward): they disagree")
    assert "jumps" not in problem
    assert "incoming gradient" in problem


def test_a_float32_gradient_for_a_float64_input_gets_its_own_message():
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    problems = find_problems(SquareFloat32Gradient, square, x)
    assert any("float32 gradient for a float64 input" in p for p in problems)
    assert not any("jumps" in p for p in problems)


@pytest.mark.parametrize("function_class, reference, name", [
    (SquareInputOnCtx, square, "x"),
    (ExpOutputOnCtx, torch.exp, "result"),
])
def test_an_input_or_output_on_ctx_is_not_said_to_lack_history(function_class, reference, name):
    (problem,) = find_problems(function_class, reference, leaf(3))
    assert f"kept on ctx as attributes ({name})" in problem
    assert "saved-tensor hooks" in problem and "no history" not in problem


def test_an_intermediate_on_ctx_is_said_to_lack_history():
    kept, _ = find_problems(HiddenIntermediate, square, leaf(3))
    assert "doubled has no history for a second backward" in kept


class SquareWritesIntoGradOut(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.mul_(2 * x)  # raises under gradgradcheck: grad_out requires grad there


def test_a_penalty_check_whose_gradgradcheck_raised_offers_no_kink():
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    (problem,) = penalty_problems(SquareWritesIntoGradOut.apply, square, x)
    assert problem.startswith("second derivatives: gradgradcheck fails (backward raised")
    assert "jumps" not in problem and "cannot trace" not in problem


class SinhCombined(torch.autograd.Function):  # right, but ctx first in forward
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sinh(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.cosh(x)


def test_split_style_refuses_a_combined_style_function():
    assert penalty_problems(SinhCombined.apply, torch.sinh, leaf(3)) == []
    (problem,) = penalty_problems(SinhCombined.apply, torch.sinh, leaf(3), split_style=True)
    assert problem.startswith("the Function is in the combined style")


def test_split_style_accepts_a_split_function_and_its_subclasses():
    for function in (SinhRecomputed, SinhWrongSlope):  # the style, not the maths
        problems = penalty_problems(function.apply, torch.sinh, leaf(3), split_style=True)
        assert not any("combined style" in p for p in problems)


def test_split_style_needs_the_apply_of_a_function():
    with pytest.raises(TypeError, match="split_style=True needs a Function's own apply"):
        penalty_problems(lambda t: SinhRecomputed.apply(t), torch.sinh, leaf(3),
                         split_style=True)


# Views: an output that shares its input's memory, and .view on a strided grad_output


class FirstTwo(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x[:2]  # the mistake under test: a view of the input

    @staticmethod
    def backward(ctx, grad_out):
        grad = grad_out.new_zeros(3)
        grad[:2] = grad_out
        return grad


class FirstTwoCopied(FirstTwo):
    @staticmethod
    def forward(ctx, x):
        return x[:2].clone()


class DoubleViewed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad_out):
        return (2 * grad_out.view(-1)).view(grad_out.shape)  # the mistake: .view


class DoubleReshaped(DoubleViewed):
    @staticmethod
    def backward(ctx, grad_out):
        return (2 * grad_out.reshape(-1)).reshape(grad_out.shape)


class SavedTwice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a)
        ctx.save_for_backward(b)  # the mistake: replaces what the first call saved
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * b, grad_out * a


def test_an_output_that_is_a_view_of_the_input_is_named():
    (problem,) = find_problems(FirstTwo, lambda t: t[:2], leaf(3))
    assert problem.startswith("an output is a view of an input")
    assert find_problems(FirstTwoCopied, lambda t: t[:2], leaf(3)) == []


def test_view_on_a_strided_grad_output_is_named():
    (problem,) = find_problems(DoubleViewed, lambda t: 2 * t, leaf(2, 3))
    assert "not contiguous" in problem and ".reshape" in problem
    assert "view size is not compatible" in problem
    assert find_problems(DoubleReshaped, lambda t: 2 * t, leaf(2, 3)) == []


def test_a_one_dimensional_output_is_not_probed_with_a_strided_gradient():
    # .view(-1) of a 1-D gradient always works: nothing to report
    assert find_problems(DoubleViewed, lambda t: 2 * t, leaf(3)) == []


def test_save_for_backward_called_twice_is_explained():
    (problem,) = find_problems(SavedTwice, torch.mul, leaf(3), leaf(3))
    assert "not enough values to unpack (expected 2, got 1)" in problem
    assert "a second ctx.save_for_backward call replaces what the first saved" in problem
    (nothing_saved,) = find_problems(NothingSaved, square, leaf(3))
    assert "save_for_backward call" not in nothing_saved  # the remark is for a partial save


def test_outcomes_prints_a_result_or_the_first_sentence_of_an_error(capsys):
    from gradbook.diagnose import outcomes

    def fails():
        raise RuntimeError("view size is not compatible. Use .reshape(...) instead.")

    found = outcomes({"doubled": lambda: torch.tensor([1.0, 2.0]) * 2, "viewed": fails,
                      "text": lambda: "float64, off by 2.0e-08"})
    assert found == {"doubled": [2.0, 4.0], "viewed": "RuntimeError: view size is not compatible",
                     "text": "float64, off by 2.0e-08"}
    assert capsys.readouterr().out.splitlines() == [
        "doubled: [2.0, 4.0]", "viewed: RuntimeError: view size is not compatible",
        "text: float64, off by 2.0e-08"]


def test_outcomes_lets_a_mistake_in_the_case_itself_through():
    from gradbook.diagnose import outcomes

    with pytest.raises(KeyError):
        outcomes({"broken case": lambda: {}["missing"]})
    with pytest.raises(TypeError, match="function of no arguments"):
        outcomes({"not callable": 3})
    with pytest.raises(ValueError, match="whole number of columns"):
        outcomes({}, width=True)
