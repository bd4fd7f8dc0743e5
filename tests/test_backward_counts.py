"""gradbook.backward_counts: the entries and elements each backward of Aggregate operators records."""
import pytest
import torch

from gradbook.backward_counts import (
    elements_per_backward,
    print_counts,
    sizes_of_values_made,
)
from gradbook.simple_grad import Variable, quiet_trace, reset_tape

A = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
B = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64)


def simple(a, b):
    return (a + b) * b


def test_a_view_writes_no_element_and_init_is_restored():
    plain = Variable.__init__
    with quiet_trace(), sizes_of_values_made() as sizes:
        reset_tape()
        s = Variable.constant(torch.tensor(2.0), name="s")
        e = s.expand(3)
        p = e * Variable.constant(A, name="w")
    assert sizes[e.name] == 0 and sizes[p.name] == 3 and sizes["s"] == 1
    assert Variable.__init__ is plain


def test_elements_of_the_unfused_program():
    # first backward: expand (a view, 0), two products (3 each), one sum (3) = 9
    assert elements_per_backward(simple, A, B) == [9, 40]
    assert len(elements_per_backward(simple, A, B, reads_output=True)) == 2


def test_print_counts_prints_one_row_per_function(capsys):
    print_counts([simple], A, B)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split() == ["simple", "[4,", "15]", "[9,", "40]"]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: print_counts(simple, A, B), "a list of the functions"),
    (lambda: print_counts([simple, 3], A, B), "a list of the functions"),
    (lambda: print_counts([simple], [1.0], B), "a_value is the tensor"),
])
def test_print_counts_says_what_is_wrong(call, message):
    with pytest.raises(TypeError, match=message):
        call()
