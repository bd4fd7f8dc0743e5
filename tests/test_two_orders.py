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


def test_mark_recorded_backward_fills_only_the_nodes_the_backward_made():
    from gradbook import draw_graph
    from gradbook.two_orders import RECORDED_FILL, mark_recorded_backward

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x * x).sum()
    (gradient,) = torch.autograd.grad(loss, x, create_graph=True)
    params = {"x": x}
    graph = draw_graph(gradient, params)
    marked = mark_recorded_backward(graph, gradient, loss)
    # the loss's graph: two MulBackward0, SumBackward0 (not under the gradient), and
    # x's AccumulateGrad; everything else under the gradient the backward made
    forward = {id(loss.grad_fn)}
    stack = [loss.grad_fn]
    while stack:
        for node, _ in stack.pop().next_functions:
            if node is not None and id(node) not in forward:
                forward.add(id(node))
                stack.append(node)
    under, stack = set(), [gradient.grad_fn]
    while stack:
        node = stack.pop()
        if id(node) not in under:
            under.add(id(node))
            stack.extend(n for n, _ in node.next_functions if n is not None)
    assert marked.marked == len(under - forward) > 0
    assert marked.svg.count(f'fill="{RECORDED_FILL}"') == marked.marked
    assert graph.svg.count(f'fill="{RECORDED_FILL}"') == 0  # the original is unchanged
    assert "lightgrey" in marked.svg  # the forward's nodes keep their grey
    assert f"the {marked.marked} nodes the recorded backward made" in marked.description


def test_mark_recorded_backward_refuses_a_graph_it_cannot_mark():
    from gradbook import draw_graph
    from gradbook.two_orders import mark_recorded_backward

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x * x).sum()
    (gradient,) = torch.autograd.grad(loss, x, create_graph=True)
    with pytest.raises(ValueError, match="no graph"):
        mark_recorded_backward(draw_graph(gradient), gradient, loss.detach())
    other = (x.exp() * x).sum()  # a graph not drawn from this gradient
    with pytest.raises(ValueError, match="not drawn from these gradients"):
        mark_recorded_backward(draw_graph(other), gradient, loss)
    # every node under the loss is in the loss's graph: nothing was recorded
    with pytest.raises(ValueError, match="create_graph=True"):
        mark_recorded_backward(draw_graph(loss), loss, loss)
