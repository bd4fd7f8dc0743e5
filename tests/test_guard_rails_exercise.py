"""The guard rails chapter's exercise checker names each wrong prediction.

The right answers below are written out by hand from the rails' messages, not taken from
the checker: the checker finds them by running the programs, and these tests check that it
finds the same ones, and says which program a wrong prediction is about.
"""
import pytest

from fixtures import chapter_namespace, says

RIGHT = {
    1: "do not broadcast",
    2: "got a float where a Variable was expected",
    3: "not caught",
    4: "is not on the tape",
    5: "only a scalar (0-dim) Variable can be expanded",
}
# per program, a wrong prediction a reader could make, and words the checker must print
WRONG = {
    1: ("not caught", "Program 1: you said 'not caught', but it stops with"),
    2: ("do not broadcast", "but it stops with: operator * got a float"),
    3: ("is not on the tape", "Program 3: you said 'is not on the tape', but no rail stops it"),
    4: ("two different values are named", "but it stops with"),
    5: ("do not broadcast", "only a scalar (0-dim) Variable can be expanded"),
}


@pytest.fixture(scope="module")
def check():
    return chapter_namespace("simple_grad_guard_rails.ipynb", "check_predictions")[
        "check_predictions"
    ]


@pytest.mark.timeout(60)
def test_the_right_predictions_pass(check):
    assert says(check, dict(RIGHT)) == "Correct: all five predicted."


@pytest.mark.timeout(60)
@pytest.mark.parametrize("program", sorted(WRONG))
def test_each_wrong_prediction_is_named(check, program):
    prediction, expected = WRONG[program]
    printed = says(check, {**RIGHT, program: prediction})
    assert expected in printed
    assert f"Program {program}:" in printed
    others = [n for n in RIGHT if n != program]
    assert not any(f"Program {n}:" in printed for n in others)  # only the wrong one


@pytest.mark.timeout(60)
def test_malformed_answers_say_how_to_write_them(check):
    assert "write a dict" in says(check, list(RIGHT.values()))
    assert "No prediction for program 3, 5" in says(
        check, {n: p for n, p in RIGHT.items() if n not in (3, 5)}
    )
    assert "not a phrase of the summary's table" in says(check, {**RIGHT, 2: "a float"})


@pytest.mark.timeout(60)
def test_a_count_phrase_is_a_phrase_whatever_its_counts(check):
    # the table's "returned 1 gradient for 2 inputs" stands for any counts: a wrong
    # prediction written with other counts is judged, not refused as "not a phrase"
    printed = says(check, {**RIGHT, 1: "returned 3 gradients for 2 inputs"})
    assert "not a phrase" not in printed
    assert "Program 1: you said 'returned 3 gradients for 2 inputs'" in printed
