"""counting_rules: the runs of each rule in a grad call, and who recorded what."""
import pytest
import torch

from gradbook.rule_runs import counting_rules
from gradbook.simple_grad import (
    Variable,
    grad,
    gradient_tape,
    quiet_trace,
    reset_tape,
)


def second_call():
    # the chapter's L0 = sum((a + b) * b), its gradients, and L1 their norm
    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.tensor([1.0, 2.0, 3.0]), name="a")
        b = Variable.constant(torch.tensor([4.0, 5.0, 6.0]), name="b")
        L0 = ((a + b) * b).sum(name="L0")
        da, db = grad(L0, [a, b])
        L1 = (da * da + db * db).sum(name="L1")
    return a, b, L1


def test_counts_the_runs_and_restores_the_rules():
    a, b, L1 = second_call()
    before = list(gradient_tape)
    with quiet_trace():
        (da, db), runs, recorded_by = counting_rules(
            gradient_tape, lambda: grad(L1, [a, b])
        )
    # a + b runs again, (.) * b and .sum() of the first forward do not
    assert [runs[i] for i in range(len(before))] == [1, 0, 0] + [1] * 8
    assert gradient_tape[:len(before)] == before  # unwrapped again
    assert set(recorded_by) == set(range(len(before), len(gradient_tape)))
    assert recorded_by[len(gradient_tape) - 1] is None  # grad's own sum
    torch.testing.assert_close(da.value, torch.tensor([18.0, 24.0, 30.0]))
    torch.testing.assert_close(db.value, torch.tensor([44.0, 58.0, 72.0]))


def test_restores_the_rules_when_the_call_fails():
    a, b, L1 = second_call()
    before = list(gradient_tape)

    def failing():
        raise RuntimeError("on purpose")

    with pytest.raises(RuntimeError, match="on purpose"):
        counting_rules(gradient_tape, failing)
    assert gradient_tape == before


def test_says_what_to_pass():
    a, b, L1 = second_call()
    with pytest.raises(TypeError, match="pass the tape itself"):
        counting_rules(tuple(gradient_tape), lambda: grad(L1, [a, b]))
    with pytest.raises(TypeError, match="pass a function to run"):
        counting_rules(gradient_tape, None)
