"""A silenced trace costs nothing: the engine builds a trace line only when it prints it."""
import torch

from gradbook.simple_grad import Variable, grad, quiet_trace, reset_tape


class CountedTensor(torch.Tensor):
    """A tensor that counts how often it is turned into text."""

    texts_made = 0

    def __repr__(self, *args, **kwargs):
        CountedTensor.texts_made += 1
        return "CountedTensor"

    def __format__(self, spec):
        CountedTensor.texts_made += 1
        return "CountedTensor"


class CountedName(str):
    """A value name that counts how often it is formatted into a line."""

    formats = 0

    def __format__(self, spec):
        CountedName.formats += 1
        return str.__format__(self, spec)


def counted(*values):
    return torch.tensor(values, dtype=torch.float64).as_subclass(CountedTensor)


def test_a_silenced_constant_never_turns_its_tensor_into_text():
    CountedTensor.texts_made = 0
    with quiet_trace():
        reset_tape()
        Variable.constant(counted(1.0, 2.0, 3.0), name="a")
    assert CountedTensor.texts_made == 0


def test_a_printed_constant_shows_its_tensor(capsys):
    CountedTensor.texts_made = 0
    reset_tape()
    Variable.constant(counted(1.0, 2.0, 3.0), name="a")
    assert CountedTensor.texts_made == 1
    assert capsys.readouterr().out == "a = CountedTensor\n"


def test_a_silenced_program_and_gradient_format_no_line(capsys):
    CountedName.formats = 0
    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.tensor([1.0, 2.0]), name=CountedName("a"))
        b = Variable.constant(torch.tensor([3.0, 4.0]), name=CountedName("b"))
        L = ((a + b) * b).sum(name=CountedName("L"))
        grad(L, [a, b])
    assert CountedName.formats == 0
    assert capsys.readouterr().out == ""


def test_the_printed_trace_is_unchanged(capsys):
    reset_tape()
    a = Variable.constant(torch.tensor([1.0, 2.0]), name="a")
    b = Variable.constant(torch.tensor([3.0, 4.0]), name="b")
    L = ((a + b) * b).sum(name="L")
    grad(L, [a, b])
    assert capsys.readouterr().out.splitlines() == [
        "a = tensor([1., 2.])",
        "b = tensor([3., 4.])",
        "v0 = a + b",
        "v1 = v0 * b",
        "L = v1.sum()",
        "dL ------------------------",
        "v3 = v2.expand(2)",
        "v4 = v3 * b",
        "v5 = v3 * v0",
        "v6 = v5 + v4",
        "dL_dL = v2",
        "dL_dv1 = v3",
        "dL_dv0 = v4",
        "dL_db = v6",
        "dL_da = v4",
        "------------------------",
    ]
