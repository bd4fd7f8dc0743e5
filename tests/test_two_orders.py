"""The harness of Aggregate operators: two orders of gradients, in Simple Grad and in PyTorch."""
import pytest
import torch

from gradbook.simple_grad import TapeEntry, Variable, gradient_tape, quiet_trace
from gradbook.two_orders import (
    backward_operations,
    compare,
    entries_per_backward,
    propagate_runs,
    side_by_side,
    torch_two_orders,
    two_orders,
)

A = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
B = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64)


def simple(a, b):
    return (a + b) * b


def hidden(a, b):
    # the intermediate t kept by the rule but declared nowhere: second order is wrong
    t = Variable(a.value + b.value)
    r = Variable(t.value * b.value)

    def propagate(dL_doutputs):
        (dL_dr,) = dL_doutputs
        dL_dt = dL_dr * b
        return [dL_dt, dL_dt + dL_dr * t]

    gradient_tape.append(TapeEntry([a.name, b.name], [r.name], propagate))
    return r


def test_the_unfused_program_agrees_with_torch_to_second_order(capsys):
    with quiet_trace():
        ours = two_orders(simple, A, B)
    assert compare(ours, torch_two_orders(simple, A, B)) == [True] * 4
    assert capsys.readouterr().out.count("right") == 4


def test_compare_flags_the_hidden_intermediate():
    with quiet_trace():
        ours = two_orders(hidden, A, B)
    assert ours[2] is None  # dL1/da: a known zero, where torch has 2(t + b)
    assert compare(ours, torch_two_orders(simple, A, B), show=False) == [
        True, True, False, False,
    ]


def test_entries_and_operations_are_counted_per_backward():
    assert entries_per_backward(simple, A, B) == [4, 15]
    # an L1 that also reads the output sends a gradient back through L0 too
    assert entries_per_backward(simple, A, B, reads_output=True) == [4, 19]
    assert dict(backward_operations(simple, A, B)) == {
        "operator_add": 1, "operator_expand": 1, "operator_mul": 2,
    }
    # L1 reads the first gradients, made from v0 = a + b and b, not from L0:
    # the addition's rule runs in both backwards, the sum's in the first only
    assert propagate_runs(simple, A, B, position=0) == [1, 1]
    assert propagate_runs(simple, A, B, position=2) == [1, 0]


def test_gradient_can_be_replaced_and_is_used():
    calls = []

    def counting_grad(L, desired):
        from gradbook.simple_grad import grad

        calls.append(L.name)
        return grad(L, desired)

    with quiet_trace():
        two_orders(simple, A, B, gradient=counting_grad)
    assert calls == ["L0", "L1"]


def overwriting(a, b):
    # (a + b) * b as one entry with outputs r and t, whose rule overwrites t's own
    # gradient with dL_dr * b instead of adding to it: wrong only when both arrive
    t = Variable(a.value + b.value)
    r = Variable(t.value * b.value)

    def propagate(dL_doutputs):
        dL_dr, dL_dt = dL_doutputs
        dL_db = None
        if dL_dr is not None:
            dL_dt = dL_dr * b  # the bug: should add to the incoming dL_dt
            dL_db = dL_dr * t
        if dL_dt is None:
            return [None, dL_db]
        return [dL_dt, dL_dt if dL_db is None else dL_db + dL_dt]

    gradient_tape.append(
        TapeEntry([a.name, b.name], [r.name, t.name], propagate)
    )
    return r


def test_a_second_loss_reading_the_output_catches_an_overwritten_gradient():
    with quiet_trace():
        plain = two_orders(overwriting, A, B)
        reading = two_orders(overwriting, A, B, reads_output=True)
        unfused = two_orders(simple, A, B, reads_output=True)
    # the plain L1 never hands the rule both gradients: the bug passes
    assert all(compare(plain, torch_two_orders(simple, A, B), show=False))
    expected = torch_two_orders(simple, A, B, reads_output=True)
    assert all(compare(unfused, expected, show=False))
    assert compare(reading, expected, show=False)[2:] == [False, False]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: two_orders("simple", A, B), "pass the function"),
        (lambda: two_orders(simple, [1.0], B), "a_value is the tensor"),
        (lambda: torch_two_orders(simple, A, 2.0), "b_value is the tensor"),
        (lambda: two_orders(simple, A, B, entries=()), "entries is a list"),
        (lambda: compare([None] * 3, [A] * 4), "ours is the list of four"),
        (lambda: compare([A] * 4, [A] * 4), "are Variables"),
        (lambda: propagate_runs(simple, A, B, position=5), "no entry at position 5"),
        (lambda: side_by_side("drawing"), "pass the drawings"),
        (lambda: side_by_side(Drawing(10), same_scale=1), "True or False"),
        (lambda: side_by_side(Drawing(None), same_scale=True), "width in pt"),
        (lambda: side_by_side(Drawing(1), Drawing(2), titles=["a"]), "one string per"),
        (lambda: side_by_side(Drawing(1), Drawing(2), titles="ab"), "one string per"),
        (lambda: two_orders(simple, A, B, reads_output=1), "True or False"),
        (
            lambda: entries_per_backward(simple, A, B, reads_output="yes"),
            "True or False",
        ),
    ],
)
def test_mistakes_are_named(call, message):
    with quiet_trace(), pytest.raises((TypeError, ValueError), match=message):
        call()


class Drawing:
    """A stand-in for a drawing: an SVG of the given width in pt (None: in no unit)."""

    def __init__(self, points):
        self.points = points

    def _repr_html_(self):
        width = "100%" if self.points is None else f"{self.points}pt"
        return f'<svg width="{width}" height="10pt"></svg>'


def test_same_scale_gives_each_drawing_its_share_of_the_widest():
    html = side_by_side(Drawing(518), Drawing(625), same_scale=True).data
    assert '<div style="max-width: 82.9%"><svg width="518pt"' in html
    assert '<div style="max-width: 100.0%"><svg width="625pt"' in html
    # without it, each drawing takes what the column gives it, as before
    assert "max-width" not in side_by_side(Drawing(518), Drawing(625)).data


def test_titles_go_above_their_drawings_in_order():
    html = side_by_side(Drawing(1), Drawing(2), titles=["Bad<1>", "Good"]).data
    assert html.index(">Bad&lt;1&gt;</p>") < html.index('width="1pt"')
    assert html.index('width="1pt"') < html.index(">Good</p>")
    assert html.index(">Good</p>") < html.index('width="2pt"')
    # dark on the light panel the drawings keep in dark mode, not the theme's pale code colour
    assert html.count("color: #222") == 2
