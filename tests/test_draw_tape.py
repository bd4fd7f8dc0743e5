"""draw_tape: the tape's structure as a graph, the same SVG every run, bad input explained."""
import re

import pytest
import torch

from fixtures import tape_with_a_captured_orphan
from gradbook import Graph, GraphvizMissingError, draw_tape
from gradbook.simple_grad import (
    TapeEntry,
    Variable,
    grad,
    gradient_tape,
    quiet_trace,
    reset_tape,
)


def record_simple():
    """(a + b) * b summed, on a fresh tape: entries add, mul, sum."""
    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.tensor([1.0, 2.0]), name="a")
        b = Variable.constant(torch.tensor([3.0, 4.0]), name="b")
        ((a + b) * b).sum(name="L")
    return list(gradient_tape)


def edges(svg):
    """The (tail, head) node names of every edge; graphviz titles edges 'tail&#45;&gt;head'."""
    titles = re.findall(r"<title>(.*?)</title>", svg)
    return [tuple(t.split("&#45;&gt;")) for t in titles if "&#45;&gt;" in t]


def test_structure_of_a_known_tape():
    graph = draw_tape(record_simple())
    assert isinstance(graph, Graph)
    assert graph.node_count == 3 + 5  # entries add, mul, sum; values a, b, v0 (t), v1 (r), L
    assert sorted(edges(graph.svg)) == sorted([
        ("value0", "entry0"), ("value1", "entry0"), ("entry0", "value2"),  # a, b -> add -> v0
        ("value2", "entry1"), ("value1", "entry1"), ("entry1", "value3"),  # v0, b -> mul -> v1
        ("value3", "entry2"), ("entry2", "value4"),  # v1 -> sum -> L
    ])
    for label in ("#0 operator_add", "#1 operator_mul", "#2 operator_sum", ">a<", ">b<", ">L<"):
        assert label in graph.svg
    assert graph.description.startswith("Simple Grad tape with 3 entries and 5 values.")
    assert "#1 operator_mul: v0, b -> v1" in graph.description


def test_a_slice_keeps_the_tape_numbering():
    tape = record_simple()
    graph = draw_tape(tape[1:], first_index=1)
    assert "#1 operator_mul" in graph.svg and "#0 " not in graph.svg
    assert graph.node_count == 2 + 4  # mul, sum; v0, b, v1, L


def test_same_tape_gives_identical_svg():
    first = draw_tape(record_simple())
    second = draw_tape(record_simple())
    assert first.svg == second.svg
    assert first.description == second.description
    assert not re.search(r"\d{9,}", first.svg)  # no id() or address anywhere
    assert 'fill="white"' in first.svg


def test_html_has_an_accessible_name():
    graph = draw_tape(record_simple())
    page = graph._repr_html_()
    assert page.startswith("<svg ") and 'role="img"' in page and " id=" not in page


def test_missing_dot_names_the_package_to_install(monkeypatch, tmp_path):
    tape = record_simple()
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no `dot` anywhere
    with pytest.raises(GraphvizMissingError) as error:
        draw_tape(tape)
    assert "apt-get install graphviz" in str(error.value)


def fake_entry(inputs):
    return TapeEntry(inputs, ["r"], lambda grads: grads)


@pytest.mark.parametrize(
    "entries, kwargs, error, expected",
    [
        ("tape", {}, TypeError, "got a str; wrap an iterator in list(...)"),
        (iter([]), {}, TypeError, "got a list_iterator"),
        ([], {}, ValueError, "the tape is empty"),
        ([("a",), ["r"]], {}, TypeError, "entries[0] is a tuple, not a TapeEntry"),
        ([fake_entry(["a", 3])], {}, TypeError, "entries[0].inputs must hold value names (str)"),
        ([fake_entry(["a"])], {"first_index": -1}, ValueError, "first_index must be a non-negative int"),
    ],
)
def test_bad_arguments_say_what_is_wrong(entries, kwargs, error, expected):
    with pytest.raises(error, match=re.escape(expected)):
        draw_tape(entries, **kwargs)


def test_a_single_entry_is_refused_with_a_fix():
    (entry, *_) = record_simple()
    with pytest.raises(TypeError, match=re.escape("pass a list of entries, e.g. [entry]")):
        draw_tape(entry)


def record_two_orders():
    """(a + b) * b summed, its gradients, then the gradients of their squared norm."""
    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.tensor([1.0, 2.0]), name="a")
        b = Variable.constant(torch.tensor([3.0, 4.0]), name="b")
        L0 = ((a + b) * b).sum(name="L0")
        ends = [len(gradient_tape)]
        dL0_da, dL0_db = grad(L0, [a, b])
        ends.append(len(gradient_tape))
        L1 = (dL0_da * dL0_da + dL0_db * dL0_db).sum(name="L1")
        ends.append(len(gradient_tape))
        grad(L1, [a, b])
        ends.append(len(gradient_tape))
    return list(gradient_tape), ends


def fill_of(svg, label):
    """The fill colour of the box whose text is label."""
    for node in svg.split('<g id="node')[1:]:
        if f">{label}<" in node:
            return re.search(r'<polygon fill="([^"]+)"', node).group(1)
    raise AssertionError(f"no node labelled {label}")


def test_values_are_labelled_with_their_gradients():
    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.tensor([1.0, 2.0]), name="a")
        b = Variable.constant(torch.tensor([3.0, 4.0]), name="b")
        L = (a * b).sum(name="L")
        dL_da, dL_db = grad(L, [a, b])
    graph = draw_tape(gradient_tape[:2], gradients={"a": dL_da, "b": dL_db})
    assert graph.values["a"] == f"a dL/da = {dL_da.name}"
    assert f"dL/db = {dL_db.name}" in graph.svg
    assert f"Gradients: dL/da = {dL_da.name}, dL/db = {dL_db.name}." in graph.description
    named = draw_tape(gradient_tape[:2], gradients={"a": "v9", "b": None}, loss="L0")
    assert named.values == {"a": "a dL0/da = v9", "b": "b dL0/db = None", "v0": "v0",
                            "L": "L"}


def test_a_gradient_written_as_numbers_gets_a_line_of_its_own():
    entries = record_simple()
    numbers = draw_tape(entries, gradients={"a": "[3, 4]", "b": "v6"}, loss="L")
    # the SVG has one <text> per line of a label
    assert "<text" in numbers.svg and ">[3, 4]</text>" in numbers.svg
    assert ">dL/da =</text>" in numbers.svg
    assert ">dL/db = v6</text>" in numbers.svg  # a name stays on the line
    assert numbers.values["a"] == "a dL/da = [3, 4]"
    one_line = draw_tape(entries, gradients={"a": "[3,4]"}, loss="L")
    assert ">dL/da = [3,4]</text>" in one_line.svg  # no space: kept on one line


def test_phases_have_their_own_styles_and_unneeded_entries_are_grey():
    tape, (forward, first, middle, second) = record_two_orders()
    phases = [("forward", 0, forward), ("first backward", forward, first),
              ("forward", first, middle), ("second backward", middle, second)]
    graph = draw_tape(tape, phases=phases, unneeded={1, 2})
    assert graph.phase_styles == {
        "forward": "grey, solid border",
        "first backward": "yellow, dashed border",
        "second backward": "plum, bold border",
    }
    assert fill_of(graph.svg, "#0 operator_add") == "lightgrey"
    assert fill_of(graph.svg, f"#{forward} operator_expand") == "#fff68f"  # khaki1
    assert fill_of(graph.svg, f"#{middle} operator_expand") == "plum"
    assert fill_of(graph.svg, "#1 operator_mul") == "white"  # greyed out
    assert [e["position"] for e in graph.entries if not e["needed"]] == [1, 2]
    assert {e["phase"] for e in graph.entries[first:middle]} == {"forward"}
    assert "2 entries greyed out" in graph.description
    assert "(second backward)" in graph.description


def test_an_orphaned_captured_value_is_drawn_beside_the_output():
    t = tape_with_a_captured_orphan()
    graph = draw_tape(gradient_tape, show_captured=True)
    assert graph.orphans == [{"position": 0, "variable": "t", "name": t.name}]
    assert graph.node_count == 1 + 2 + 1
    assert f"keeps t = {t.name}, which is neither an input nor an output" in graph.description
    assert 'stroke="#cd0000"' in graph.svg  # red3
    # the node's words are the key's (Aggregate operators' legend), and the line's
    assert ">(captured, not declared)<" in graph.svg and ">captured<" in graph.svg
    assert "kept" not in graph.svg
    plain = draw_tape(gradient_tape)
    assert plain.orphans == [] and plain.node_count == 3


def test_an_orphan_is_still_found_after_a_backward_reads_it():
    # the first backward records entries that read t, so "on no entry of the
    # tape" would give a false all-clear; t is still undeclared by entry #0
    with quiet_trace():
        reset_tape()
        a = Variable.constant(torch.tensor([1.0, 2.0]), name="a")
        t = Variable(a.value * 2)  # made without an entry
        r = Variable(a.value * t.value)

        def propagate(dL_doutputs):
            return [dL_doutputs[0] * t]

        gradient_tape.append(TapeEntry(["a"], [r.name], propagate))
        grad(r.sum(), [a])
    assert any(t.name in entry.inputs for entry in gradient_tape[1:])
    graph = draw_tape(gradient_tape, show_captured=True)
    assert [orphan["name"] for orphan in graph.orphans] == [t.name]
    # t is drawn once, as the value the backward reads, joined to #0 by the captured line
    assert "not declared" not in graph.svg and "captured" in graph.svg
    # no entry wrote t: its one node is red and dashed, as a new orphan's is
    assert graph.svg.count('stroke="#cd0000"') >= 2  # the line and t's ellipse


def test_marked_entries_keep_their_fill_and_get_a_thick_blue_border():
    tape = record_simple()  # #0 add, #1 mul, #2 sum
    graph = draw_tape(tape, phases=[("forward", 0, 3)], marked=[1])
    boxes = {label: node for node in graph.svg.split('<g id="node')[1:]
             for label in re.findall(r">(#\d [a-z_]+)<", node)}
    assert fill_of(graph.svg, "#1 operator_mul") == fill_of(graph.svg, "#0 operator_add")
    assert 'stroke="#0000cd"' in boxes["#1 operator_mul"]  # blue3
    assert 'stroke-width="4"' in boxes["#1 operator_mul"]
    assert "#0000cd" not in boxes["#0 operator_add"] + boxes["#2 operator_sum"]
    assert "Marked with a thick blue border: #1." in graph.description


def test_a_captured_value_on_the_tape_is_no_orphan():
    graph = draw_tape(record_simple(), show_captured=True)
    assert graph.orphans == []


@pytest.mark.parametrize(
    "kwargs, error, expected",
    [
        ({"gradients": [1]}, TypeError, "gradients must be a dict of value name -> gradient"),
        ({"gradients": {1: "v0"}}, TypeError, "keyed by value name (str)"),
        ({"gradients": {"z": "v0"}}, ValueError, "names 'z', which no drawn entry"),
        ({"gradients": {"a": 3.0}}, TypeError, "must be a Variable, its name or None"),
        ({"gradients": {"a": "v0"}, "loss": 0}, TypeError, "loss is the loss's name"),
        ({"phases": "forward"}, TypeError, "phases must be a list of (name, start, end)"),
        ({"phases": [("f", 0)]}, TypeError, "('f', 0) is not"),
        ({"phases": [("f", 2, 1)]}, ValueError, "ends (1) before it starts (2)"),
        ({"phases": [("f", 0, 2), ("g", 1, 3)]}, ValueError, "position 1 is in two phases"),
        ({"phases": [(str(i), i, i + 1) for i in range(3)] + [("x", 3, 3), ("y", 3, 3)]},
         None, None),
        ({"unneeded": 3}, TypeError, "collection of tape positions"),
        ({"unneeded": ["1"]}, TypeError, "holds tape positions (int)"),
        ({"unneeded": [7]}, ValueError, "position 7 is not drawn"),
        ({"marked": [7]}, ValueError, "marked position 7 is not drawn"),
        ({"marked": [True]}, TypeError, "marked holds tape positions (int)"),
        ({"earlier_values": "b"}, TypeError, "list of value names"),
        ({"earlier_values": [1]}, TypeError, "holds value names (str)"),
        ({"earlier_values": ["w"]}, ValueError, "'w' is not read or written"),
        ({"names": ["t"]}, TypeError, "names maps value names"),
        ({"names": {"w": "t"}}, ValueError, "'w' is not read or written"),
    ],
)
def test_bad_drawing_options_say_what_is_wrong(kwargs, error, expected):
    tape = record_simple()
    if error is None:
        draw_tape(tape, **kwargs)  # empty phases draw nothing: allowed
        return
    with pytest.raises(error, match=re.escape(expected)):
        draw_tape(tape, **kwargs)


def test_parts_of_one_tape_keep_their_phase_styles_with_phase_order():
    tape, (forward, first, middle, second) = record_two_orders()
    phases = [("forward", 0, forward), ("first backward", forward, first),
              ("forward", first, middle), ("second backward", middle, second)]
    order = ["forward", "first backward", "second backward"]
    # without phase_order the second part's first phase would take grey
    alone = draw_tape(tape[middle:], middle, phases=phases)
    assert fill_of(alone.svg, f"#{middle} operator_expand") == "lightgrey"
    part = draw_tape(tape[middle:], middle, phases=phases, phase_order=order)
    assert fill_of(part.svg, f"#{middle} operator_expand") == "plum"
    assert list(part.phase_styles) == order  # the key covers every part
    assert "forward (grey" not in part.description  # only what is drawn
    with pytest.raises(ValueError, match="phase_order must list every phase drawn"):
        draw_tape(tape[middle:], middle, phases=phases, phase_order=["forward"])


def test_too_many_phase_names_are_refused():
    tape, _ = record_two_orders()
    phases = [(f"p{i}", i, i + 1) for i in range(6)]
    with pytest.raises(ValueError, match="at most 5 distinct phase names"):
        draw_tape(tape, phases=phases)


def test_styled_drawings_are_the_same_every_run():
    tape, (forward, first, middle, second) = record_two_orders()
    phases = [("forward", 0, forward), ("backward", forward, first)]
    one = draw_tape(tape[:first], phases=phases, unneeded=[2])
    tape, _ = record_two_orders()
    two = draw_tape(tape[:first], phases=phases, unneeded=[2])
    assert one.svg == two.svg and one.description == two.description


def test_compact_drawings_are_narrower_and_name_operations_shortly():
    tape, _ = record_two_orders()
    wide, narrow = draw_tape(tape), draw_tape(tape, compact=True)

    def width(graph):
        return float(re.search(r'<svg width="([\d.]+)pt"', graph.svg).group(1))

    assert width(narrow) < 0.6 * width(wide)
    assert ">#1 mul<" in narrow.svg and "operator_" not in narrow.svg
    assert narrow.entries[1]["operation"] == "mul"


def test_an_entry_of_another_class_with_the_same_fields_is_drawn():
    # chapter 1 defines its own TapeEntry class before the engine is a module
    from typing import NamedTuple

    class ChapterEntry(NamedTuple):
        inputs: list
        outputs: list
        propagate: object

    entries = [ChapterEntry(e.inputs, e.outputs, e.propagate) for e in record_simple()]
    graph = draw_tape(entries)
    assert graph.svg == draw_tape(record_simple()).svg


def test_max_width_scales_a_wide_drawing_down_and_leaves_a_narrow_one():
    tape, _ = record_two_orders()

    def width(graph):
        return float(re.search(r'<svg width="([\d.]+)pt"', graph.svg).group(1))

    wide = draw_tape(tape, compact=True)
    fitted = draw_tape(tape, compact=True, max_width=0.8 * width(wide))
    assert width(fitted) <= 0.8 * width(wide) + 1
    assert fitted.description == wide.description
    small = draw_tape(record_simple())
    assert draw_tape(record_simple(), max_width=10 * width(small)).svg == small.svg
    with pytest.raises(TypeError, match="max_width is a width in points"):
        draw_tape(tape, max_width="6in")


def test_earlier_values_are_filled_pale_grey_and_named_in_the_description():
    tape = record_simple()
    graph = draw_tape(tape[1:], first_index=1, earlier_values=["v0", "b"])
    assert graph.earlier_values == ["b", "v0"]
    assert "Values made earlier (pale grey fill): b, v0." in graph.description
    plain = draw_tape(tape[1:], first_index=1)
    assert graph.svg.count('fill="#e5e5e5"') == 2  # gray90, one per marked value
    assert 'fill="#e5e5e5"' not in plain.svg


def test_names_label_a_value_with_the_programs_name():
    tape = record_simple()
    graph = draw_tape(tape, names={"v0": "t"})
    assert ">t = v0<" in graph.svg
    assert ">t = v0<" not in draw_tape(tape).svg


def test_a_value_read_twice_by_one_entry_is_one_arrow_labelled_x2():
    with quiet_trace():
        reset_tape()
        b = Variable.constant(torch.tensor([3.0, 4.0]), name="b")
        (b * b).sum(name="L")
    graph = draw_tape(list(gradient_tape))
    assert edges(graph.svg).count(("value0", "entry0")) == 1  # b -> #0 mul, once
    assert ">×2<" in graph.svg
    assert "#0 operator_mul: b, b -> v0" in graph.description  # both reads still named
