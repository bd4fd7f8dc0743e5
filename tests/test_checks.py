"""check_gradients, first_line_of_error and first_line, the helpers the chapters verify Functions with."""
import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

from fixtures import HiddenIntermediate, leaf
from gradbook import check_gradients, first_line_of_error
from gradbook.checks import first_line


def test_a_correct_function_passes_both_orders(capsys):
    check_gradients(torch.sin, leaf(3))
    assert capsys.readouterr().out.strip() == "gradcheck: True, gradgradcheck: True"


def test_a_wrong_second_derivative_is_caught():
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        check_gradients(HiddenIntermediate.apply, leaf(3))


def test_float32_is_refused_with_the_fix():
    with pytest.raises(TypeError, match=r"float64.*dtype=torch.float64"):
        check_gradients(torch.sin, leaf(3, dtype=torch.float32))


def test_inputs_must_require_grad():
    with pytest.raises(ValueError, match="requires_grad=True"):
        check_gradients(torch.sin, torch.rand(3, dtype=torch.float64))


def test_missing_inputs_are_refused():
    with pytest.raises(TypeError, match="at least one input"):
        check_gradients(torch.sin)


def test_first_line_of_error_keeps_type_and_first_line():
    with pytest.raises(ValueError) as error:
        with first_line_of_error():
            raise ValueError("what went wrong\nnumerical: [...]\nanalytical: [...]")
    assert str(error.value) == "what went wrong"


def test_first_line_of_error_says_when_no_error_came():
    with pytest.raises(AssertionError, match="raised no error"):
        with first_line_of_error():
            pass


class TwoPartError(Exception):
    """An exception whose constructor needs more than a message."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def test_first_line_of_error_handles_constructors_with_more_arguments():
    with pytest.raises(TwoPartError) as error:
        with first_line_of_error():
            raise TwoPartError("first line\nthe rest", code=7)
    assert str(error.value) == "first line"
    assert error.value.code == 7


def test_first_line_of_error_wraps_to_a_width():
    line = "an error message " * 10 + "that is long"
    with pytest.raises(RuntimeError) as error:
        with first_line_of_error(width=40):
            raise RuntimeError(line + "\nthe rest")
    shown = f"RuntimeError: {error.value}".splitlines()
    assert all(len(row) <= 40 for row in shown) and len(shown) > 1
    assert " ".join(shown) == f"RuntimeError: {line}"


def test_first_line_of_error_without_width_keeps_a_long_line():
    line = "x " * 60
    with pytest.raises(RuntimeError) as error:
        with first_line_of_error():
            raise RuntimeError(line)
    assert str(error.value) == line


def test_first_line_of_error_keeps_more_lines_wrapped_with_their_indentation():
    cause = "  the cause, indented, " + "and long " * 8
    with pytest.raises(RuntimeError) as error:
        with first_line_of_error(width=40, lines=2):
            raise RuntimeError("what went wrong\n" + cause + "\nthe rest")
    rows = f"RuntimeError: {error.value}".splitlines()
    assert rows[0] == "RuntimeError: what went wrong"
    assert rows[1].startswith("  the cause") and all(row.startswith("    ") for row in rows[2:])
    assert all(len(row) <= 40 for row in rows)
    assert " ".join(row.strip() for row in rows[1:]) == cause.strip()


def test_first_line_of_error_keeps_lines_without_width():
    with pytest.raises(ValueError) as error:
        with first_line_of_error(lines=2):
            raise ValueError("one\ntwo\nthree")
    assert str(error.value) == "one\ntwo"


@pytest.mark.parametrize("lines", [0, -1, 1.5, "2", True])
def test_first_line_of_error_refuses_a_count_that_is_not_a_whole_number(lines):
    with pytest.raises(ValueError, match="whole number"):
        with first_line_of_error(lines=lines):
            pass


def test_first_line_keeps_the_first_line_of_a_caught_error():
    error = RuntimeError("  what went wrong\nJacobian:\n[[1.0]]")
    assert first_line(error) == "what went wrong"
    assert first_line(ValueError()) == ""


def test_first_line_refuses_what_is_not_an_exception():
    with pytest.raises(TypeError, match="caught exception"):
        first_line("what went wrong")
