"""draw_tape: the tape's structure as a graph, the same SVG every run, bad input explained."""
import contextlib
import io
import re

import pytest
import torch

from gradbook import Graph, GraphvizMissingError, draw_tape
from gradbook.simple_grad import TapeEntry, Variable, gradient_tape, reset_tape


def record_simple():
    """(a + b) * b summed, on a fresh tape: entries add, mul, sum."""
    with contextlib.redirect_stdout(io.StringIO()):
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
