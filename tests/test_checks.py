"""check_gradients and first_line_of_error, the helpers the chapters verify Functions with."""
import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

from fixtures import HiddenIntermediate, leaf
from gradbook import check_gradients, first_line_of_error


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
    message = "word " * 30 + "end\nthe rest"
    with pytest.raises(ValueError) as error:
        with first_line_of_error(width=40):
            raise ValueError(message)
    shown = f"ValueError: {error.value}".splitlines()
    assert all(len(line) <= 40 for line in shown)
    assert " ".join(shown) == "ValueError: " + message.splitlines()[0].strip()


def test_first_line_of_error_without_width_does_not_wrap():
    long_line = "x " * 60
    with pytest.raises(ValueError) as error:
        with first_line_of_error():
            raise ValueError(long_line)
    assert str(error.value) == long_line
