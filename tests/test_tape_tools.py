"""The tape's measurements: what a rule keeps, its bytes, how often it runs."""
import re

import pytest
import torch

from fixtures import tape_with_a_captured_orphan
from gradbook import (
    PropagateCalls,
    backward_nodes_run,
    nodes_run_by,
    bytes_kept,
    bytes_kept_by_tape,
    captured_by,
)
from gradbook.simple_grad import (
    TapeEntry,
    Variable,
    grad,
    gradient_tape,
    quiet_trace,
    reset_tape,
)


def simple_tape(n=3):
    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.ones(n, dtype=torch.float64), name="a")
        b = Variable.constant(torch.ones(n, dtype=torch.float64), name="b")
        t = a + b
        r = t * b
        L = r.sum(name="L")
    return a, b, t, r, L


def test_captured_by_names_what_each_rule_keeps():
    a, b, t, r, L = simple_tape()
    add, mul, total = gradient_tape
    assert captured_by(add) == {}
    assert captured_by(mul) == {"lhs": t, "rhs": b}
    assert captured_by(total) == {"shape": torch.Size([3])}


def test_bytes_count_each_storage_once():
    a, b, t, r, L = simple_tape(1000)
    assert bytes_kept(captured_by(gradient_tape[1]).values()) == 2 * 8000
    assert bytes_kept([t, t.value, t.value[:10]]) == 8000  # a view counts once
    assert bytes_kept([torch.Size([3]), None, "x"]) == 0
    assert bytes_kept_by_tape(gradient_tape) == (16000, 8000)  # b is a leaf, t is not


def test_bytes_kept_by_tape_follows_containers_and_helper_closures():
    t = torch.zeros(1000, dtype=torch.float64)  # 8000 bytes, not a leaf
    pair = (t,)
    by_name = {"t": [t]}

    def in_a_tuple(dL_doutputs):
        return [dL_doutputs[0] * pair[0]]

    def in_a_dict(dL_doutputs):
        return [dL_doutputs[0] * by_name["t"][0]]

    def times_t(g):
        return g * t

    def through_a_helper(dL_doutputs):
        return [times_t(dL_doutputs[0])]

    for propagate in (in_a_tuple, in_a_dict, through_a_helper):
        entry = TapeEntry(["x"], ["y"], propagate)
        assert bytes_kept_by_tape([entry]) == (8000, 8000), propagate.__name__
    cycle = [t]
    cycle.append(cycle)  # a container that holds itself is entered once
    assert bytes_kept([cycle]) == 8000


def test_counting_survives_a_second_count_and_keeps_the_results():
    with quiet_trace():
        a, b, t, r, L = simple_tape()
        calls = PropagateCalls()
        with calls.counting(gradient_tape, "first"):
            dL_da, dL_db = grad(L, [a, b])
        L1 = (dL_da * dL_da + dL_db * dL_db).sum(name="L1")
        with calls.counting(gradient_tape, "second"):
            grad(L1, [a, b])
    assert calls.total("first") == 3
    assert calls[0, "first"] == calls[0, "second"] == 1
    assert calls[1, "second"] == 0  # r = t * b does not reach L1
    assert calls.total("second") == 1 + 4 + 4  # entry 0, the first backward, L1's forward
    torch.testing.assert_close(dL_db.value, a.value + 2 * b.value)
    # counted rules keep their names and closures for the drawing and captured_by
    assert captured_by(gradient_tape[1]) == {"lhs": t, "rhs": b}
    assert gradient_tape[1].propagate.__qualname__.startswith("operator_mul.")


def test_quiet_trace_silences_only_the_block(capsys):
    with quiet_trace():
        simple_tape()
    assert capsys.readouterr().out == ""
    reset_tape()
    Variable.constant(torch.tensor([1.0]), name="a")
    assert capsys.readouterr().out == "a = tensor([1.])\n"


def test_quiet_trace_is_restored_after_an_error(capsys):
    with pytest.raises(ZeroDivisionError), quiet_trace():
        1 / 0
    reset_tape()
    Variable.constant(torch.tensor([1.0]), name="a")
    assert capsys.readouterr().out == "a = tensor([1.])\n"


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda: captured_by("entry"), "captured_by: expected a TapeEntry"),
        (lambda: bytes_kept_by_tape([1]), "bytes_kept_by_tape: expected a TapeEntry"),
        (lambda: PropagateCalls().counting((), "x").__enter__(), "pass the tape itself"),
    ],
)
def test_bad_input_is_named(call, expected):
    with pytest.raises(TypeError, match=re.escape(expected)):
        call()


def test_backward_nodes_run_lists_only_the_pruned_nodes():
    a = torch.ones(3, dtype=torch.float64, requires_grad=True)
    b = torch.ones(3, dtype=torch.float64, requires_grad=True)
    L = (a * b).sum() + (b * b).sum()
    assert backward_nodes_run(L, [a]) == ["AddBackward0", "SumBackward0", "MulBackward0"]
    assert len(backward_nodes_run(L, [b])) == 5
    # the hooks are gone: a plain grad afterwards records nothing anywhere
    (da,) = torch.autograd.grad(L, [a])
    torch.testing.assert_close(da, b.detach())


def test_backward_nodes_run_needs_a_graph():
    with pytest.raises(TypeError, match="needs a grad_fn"):
        backward_nodes_run(torch.ones(3), [torch.ones(3)])


def test_nodes_run_by_follows_the_backward_it_is_given():
    """backward(inputs=[made]) enters made's own node, ExpBackward0, which grad skips."""
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    made = x.exp()
    L = made.sin().sum()
    asked = nodes_run_by(lambda loss: loss.backward(inputs=[made], retain_graph=True), L)
    assert asked == ["SumBackward0", "SinBackward0", "ExpBackward0"]
    assert backward_nodes_run(L, [made]) == ["SumBackward0", "SinBackward0"]
    with pytest.raises(TypeError, match="run is a function of the loss"):
        nodes_run_by("backward", L)


def test_operation_counts_names_what_each_entry_recorded():
    from gradbook import operation_counts

    a, b, t, r, L = simple_tape()
    assert operation_counts(gradient_tape) == {
        "operator_add": 1,
        "operator_mul": 1,
        "operator_sum": 1,
    }
    start = len(gradient_tape)
    with quiet_trace():
        grad(L, [a, b])
    backward = operation_counts(gradient_tape[start:])
    assert backward == {"operator_expand": 1, "operator_mul": 2, "operator_add": 1}
    # a counted (wrapped) rule still counts under its own operation
    calls = PropagateCalls()
    with calls.counting(gradient_tape, "x"):
        pass
    assert operation_counts(gradient_tape[:3])["operator_mul"] == 1
    with pytest.raises(TypeError, match="operation_counts"):
        operation_counts([object()])


def drawing_with_a_skipped_rule():
    from gradbook import draw_tape

    a, b, t, r, L = simple_tape()
    end_of_forward = len(gradient_tape)
    with quiet_trace():
        grad(L, [a, b])
    phases = [("forward", 0, end_of_forward),
              ("backward", end_of_forward, len(gradient_tape))]
    return draw_tape(gradient_tape, phases=phases, unneeded=[2])


def test_tape_legend_keys_each_phase_and_the_grey_style_in_the_drawing_s_own_words():
    from gradbook.tape_tools import tape_legend

    drawing = drawing_with_a_skipped_rule()
    legend = tape_legend(drawing, not_run="rule not run by grad(L)")
    assert legend.description == (
        "Key: forward entry: grey, solid border; backward entry: yellow, dashed border; "
        "rule not run by grad(L): white, dotted grey border; an arrow goes from a value an "
        "entry reads to the entry, and from the entry to a value it writes."
    )
    for label in ("forward entry", "backward entry", "rule not run by grad(L)", "value read"):
        assert f">{label}</text>" in legend.svg
    assert legend.svg.count("stroke-dasharray") >= 2  # the dashed and the dotted box
    assert legend.svg == tape_legend(drawing, not_run="rule not run by grad(L)").svg


def test_tape_legend_asks_what_grey_means_when_the_drawing_greys_entries_out():
    from gradbook.tape_tools import tape_legend

    drawing = drawing_with_a_skipped_rule()
    with pytest.raises(ValueError, match="not_run="):
        tape_legend(drawing)
    with pytest.raises(TypeError, match="pass the drawing that draw_tape returned"):
        tape_legend("not a drawing")


def test_tape_legend_refuses_a_meaning_for_grey_that_the_drawing_does_not_use():
    from gradbook import draw_tape
    from gradbook.tape_tools import tape_legend

    simple_tape()
    with pytest.raises(ValueError, match="greys nothing out"):
        tape_legend(draw_tape(gradient_tape), not_run="rule not run")
    legend = tape_legend(draw_tape(gradient_tape))
    assert legend.description.startswith("Key: an arrow goes from a value")


def test_tape_legend_keys_the_captured_style_only_where_the_drawing_has_it():
    from gradbook import draw_tape
    from gradbook.tape_tools import tape_legend

    tape_with_a_captured_orphan()
    drawing = draw_tape(gradient_tape, show_captured=True)
    legend = tape_legend(drawing, captured="captured, not declared")
    assert ">captured, not declared</text>" in legend.svg
    assert 'stroke="#cd0000"' in legend.svg  # red3, as in the drawing
    assert "captured, not declared: a red ellipse, dashed" in legend.description
    with pytest.raises(TypeError, match="as a str"):
        tape_legend(drawing, captured=True)
    with pytest.raises(ValueError, match="shows no captured value"):
        tape_legend(draw_tape(gradient_tape), captured="captured")


def test_rules_that_recorded_names_the_rule_behind_each_new_entry():
    from gradbook.tape_tools import rules_that_recorded

    a, b, t, r, L = simple_tape()
    with quiet_trace():
        (dL_da, dL_db), recorded_by = rules_that_recorded(
            gradient_tape, lambda: grad(L, [a, b])
        )
    # sum's rule expands (entry 3), mul's rule makes two products (4, 5), grad adds b's two
    assert recorded_by == {3: 2, 4: 1, 5: 1, 6: None}
    assert [entry.propagate.__name__ for entry in gradient_tape[:3]] == ["propagate"] * 3
    torch.testing.assert_close(dL_db.value, torch.full((3,), 3.0, dtype=torch.float64))


def test_rules_that_recorded_restores_the_rules_when_run_fails():
    from gradbook.tape_tools import rules_that_recorded

    simple_tape()
    rules = [entry.propagate for entry in gradient_tape]
    with pytest.raises(ZeroDivisionError):
        rules_that_recorded(gradient_tape, lambda: 1 / 0)
    assert [entry.propagate for entry in gradient_tape] == rules
    with pytest.raises(TypeError, match="pass a function to run"):
        rules_that_recorded(gradient_tape, "grad(L, [a])")
    with pytest.raises(TypeError, match="pass the tape itself"):
        rules_that_recorded(tuple(gradient_tape), lambda: None)


def test_tape_legend_keys_earlier_values_in_the_drawing_s_own_words():
    from gradbook.tape_tools import tape_legend

    drawing = drawing_with_a_skipped_rule()
    legend = tape_legend(drawing, not_run="rule not run", earlier="made before")
    assert "made before: an ellipse filled pale grey" in legend.description
    assert ">made before</text>" in legend.svg
    assert legend.node_count == 2 + 1 + 1 + 3  # phases, grey, earlier, arrow row
    with pytest.raises(TypeError, match="earlier says what"):
        tape_legend(drawing, not_run="rule not run", earlier=True)


def test_tape_legend_keys_a_gradient_label_only_on_a_drawing_that_has_one():
    from gradbook import draw_tape
    from gradbook.tape_tools import tape_legend

    a, b, t, r, L = simple_tape()
    with quiet_trace():
        dL_da, _ = grad(L, [a, b])
    labelled = draw_tape(gradient_tape, gradients={"a": dL_da})
    sample = f"a\ndL/da = {dL_da.name}: a's gradient is {dL_da.name}"
    legend = tape_legend(labelled, gradient=sample)
    assert f">dL/da = {dL_da.name}: a&#39;s gradient is {dL_da.name}</text>" in legend.svg
    assert "(a value's node, with its gradient)" in legend.description
    with pytest.raises(ValueError, match="labels no value with its gradient"):
        tape_legend(draw_tape(gradient_tape), gradient=sample)
    with pytest.raises(TypeError, match="gradient is a sample label"):
        tape_legend(labelled, gradient=1)


def test_tape_legend_keys_the_marked_border_only_where_the_drawing_has_it():
    from gradbook import draw_tape
    from gradbook.tape_tools import tape_legend

    simple_tape()
    drawing = draw_tape(gradient_tape, marked=[0])
    legend = tape_legend(drawing, marked="addition where two paths meet")
    assert ">addition where two paths meet</text>" in legend.svg
    assert 'stroke="#0000cd"' in legend.svg  # blue3, as in the drawing
    assert 'stroke-width="4"' in legend.svg
    assert "an entry with a thick blue border" in legend.description
    with pytest.raises(TypeError, match="as a str"):
        tape_legend(drawing, marked=True)
    with pytest.raises(ValueError, match="marks no entry"):
        tape_legend(draw_tape(gradient_tape), marked="merge")
