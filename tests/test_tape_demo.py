"""gradbook.tape_demo: the tape chapter's demonstrations on a second engine."""

import pytest

from gradbook import simple_grad as sg
from gradbook.tape_demo import (
    product_counts,
    product_elements,
    walk_states,
)


def test_product_counts_are_n_forward_and_2n_minus_1_backward():
    for n, forward, backward, gradients in product_counts((2, 5, 9)):
        assert (forward, backward, gradients) == (n, 2 * n - 1, n)


def test_product_elements_by_hand():
    # forward: n - 1 products of 3 elements, and the sum's 1; backward: the
    # seed's 1 element, expand (a view) none, two products of 3 per product
    for n, forward, backward in product_elements((2, 5, 9)):
        assert (forward, backward) == (3 * (n - 1) + 1, 6 * (n - 1) + 1)


@pytest.mark.parametrize("sizes", [(), (1,), (3, 0), (2.0,), (True,)])
@pytest.mark.parametrize("helper", [product_counts, product_elements])
def test_product_helpers_refuse_bad_sizes(helper, sizes):
    with pytest.raises(ValueError, match="integers >= 2"):
        helper(sizes)


def test_helpers_leave_the_module_tape_empty():
    product_counts((3,))
    assert sg.gradient_tape == []
    product_elements((3,))
    assert sg.gradient_tape == []


def test_walk_states_follow_the_trace_of_L0():
    # by hand from the tape of L0 = ((a + b) * b).sum(): the seed v2 and the
    # expanded seed v3 (entry 2), then v4 = v3 * b for v0 and v5 = v3 * v0
    # for b (entry 1), then + hands v4 to a and adds it to b's v5 (entry 0)
    rows = walk_states()
    assert [(index, entry) for index, entry, _ in rows] == [
        (2, "v1 -> L0"), (1, "v0, b -> v1"), (0, "a, b -> v0")
    ]
    assert rows[0][2] == {"L0": "v2", "v1": "v3"}
    assert rows[1][2] == {"L0": "v2", "v1": "v3", "v0": "v4", "b": "v5"}
    assert rows[2][2] == {
        "L0": "v2", "v1": "v3", "v0": "v4", "b": "v6 = v5 + v4", "a": "v4"
    }
    assert sg.gradient_tape == []
