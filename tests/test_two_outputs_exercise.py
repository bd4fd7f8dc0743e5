"""gradbook.two_outputs_exercise: Known zeros' checker names each mistake, accepts a right
answer, and refuses an argument that is not a function with a message that says what to pass.

The wrong answers are written here, not taken from the chapter; the expected gradients come
from torch.autograd inside the checker, and the right answer below is checked by hand too."""
import pytest
import torch

from fixtures import says
from gradbook.simple_grad import TapeEntry, Variable, gradient_tape, trace
from gradbook.two_outputs_exercise import check_two_outputs


def two_outputs_with(rule):
    """operator_square_and_double whose propagate returns rule(dL_dr, dL_ds, x)."""
    def operator_square_and_double(x):
        r, s = Variable(x.value * x.value), Variable(x.value + x.value)
        trace("{0}, {1} = {2} * {2}, {2} + {2}", r.name, s.name, x.name)

        def propagate(dL_doutputs):
            return [rule(*dL_doutputs, x)]

        gradient_tape.append(TapeEntry([x.name], [r.name, s.name], propagate))
        return r, s

    return operator_square_and_double


def skipping(dL_dr, dL_ds, x):  # 2x dL_dr + 2 dL_ds, each term only if its gradient is known
    terms = []
    if dL_dr is not None:
        terms.append(dL_dr * (x + x))
    if dL_ds is not None:
        terms.append(dL_ds + dL_ds)
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def zeros_for_none(dL_dr, dL_ds, x):
    zero = Variable(torch.zeros_like(x.value))
    dL_dr = zero if dL_dr is None else dL_dr
    dL_ds = zero if dL_ds is None else dL_ds
    return dL_dr * (x + x) + (dL_ds + dL_ds)


def zeros_to_start(dL_dr, dL_ds, x):  # skips None, but adds into zeros
    total = Variable(torch.zeros_like(x.value))
    if dL_dr is not None:
        total = total + dL_dr * (x + x)
    if dL_ds is not None:
        total = total + (dL_ds + dL_ds)
    return total


def zeros_on_tape(dL_dr, dL_ds, x):  # zeros recorded on the tape: x + (-x)
    zero = x + Variable.constant(-x.value)
    dL_dr = zero if dL_dr is None else dL_dr
    dL_ds = zero if dL_ds is None else dL_ds
    return dL_dr * (x + x) + (dL_ds + dL_ds)


def factored(dL_dr, dL_ds, x):  # 2 (dL_dr x + dL_ds), skipping each None
    u = None if dL_dr is None else dL_dr * x
    if dL_ds is not None:
        u = dL_ds if u is None else u + dL_ds
    return u + u


def off_tape(dL_dr, dL_ds, x):  # skips None, but computes on .value
    terms = []
    if dL_dr is not None:
        terms.append(dL_dr.value * 2 * x.value)
    if dL_ds is not None:
        terms.append(dL_ds.value * 2)
    return Variable(sum(terms))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("rule", [skipping, factored])
def test_right_answers_are_correct(rule):
    assert says(check_two_outputs, two_outputs_with(rule)).startswith("Correct")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("answer, message", [
    (two_outputs_with(lambda dL_dr, dL_ds, x: dL_dr * (x + x) + dL_ds + dL_ds),
     "With a loss of only r, grad fails inside your propagate"),
    (two_outputs_with(lambda dL_dr, dL_ds, x: dL_ds if dL_dr is None else dL_dr * x),
     "With a loss of only r, the gradient is wrong"),  # dr/dx is 2x, not x
    (two_outputs_with(zeros_for_none), "does work for the None"),
    (two_outputs_with(zeros_to_start), "does work for the None"),
    (two_outputs_with(zeros_on_tape), "does work for the None"),
    (two_outputs_with(off_tape), "cannot be differentiated"),
    (lambda x: x * x, "Return the two outputs"),
    (lambda x: (x * x, x + x), "Record exactly one TapeEntry"),
    (lambda x: x.no_such_method(), "Calling your function on a Variable fails: AttributeError"),
])
def test_each_mistake_gets_its_message(answer, message):
    verdict = says(check_two_outputs, answer)
    assert message in verdict and "Correct" not in verdict


def test_not_a_function_is_refused_with_what_to_pass():
    with pytest.raises(TypeError, match=r"pass your function itself.*not a str"):
        check_two_outputs("operator_square_and_double")


def test_the_right_answer_matches_the_hand_derivative():
    # dL/dx of sum(r * s) = sum(2 x^3) is 6 x^2: the checker's reference, by hand
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (got,) = torch.autograd.grad((x * x * (x + x)).sum(), x)
    torch.testing.assert_close(got, 6 * x.detach() ** 2)
