import re

import pytest
import torch

from gradbook import draw_graph
from gradbook.graphs import Graph
from gradbook.pitfall_demo import KINDS, with_key


def small_graph():
    x = torch.ones(2, requires_grad=True)
    out = x * 2
    return draw_graph(out, params={"x": x, "out": out})


def test_key_rows_and_size():
    graph = small_graph()
    keyed = with_key(graph, ["output", "leaf", "arrow"])
    assert isinstance(keyed, Graph) and keyed is not graph
    assert keyed.svg.count('<g class="key">') == 1
    for words in ("an output", "a leaf", "arrow: input to output"):
        assert words in keyed.svg and words in keyed.description
    assert keyed.description.startswith(graph.description.rstrip("."))
    assert keyed.node_count == graph.node_count
    assert repr(keyed) == repr(graph)
    old = float(graph.svg.split('height="')[1].split("pt")[0])
    new = float(keyed.svg.split('height="')[1].split("pt")[0])
    assert new == old + 14 * 3 + 6
    assert graph.svg.count('<g class="key">') == 0  # the original is unchanged


def test_every_kind_renders():
    keyed = with_key(small_graph(), list(KINDS))
    assert keyed.svg.count("<text x=") >= len(KINDS)


@pytest.mark.parametrize("kinds, error", [
    ([], ValueError), ("leaf", ValueError), (["leaves"], ValueError),
])
def test_bad_kinds(kinds, error):
    with pytest.raises(error):
        with_key(small_graph(), kinds)


def test_not_a_graph():
    with pytest.raises(TypeError, match="pass the drawing"):
        with_key(torch.ones(2), ["leaf"])


def test_view_swatch_is_dotted_like_the_drawing():
    # two outputs, one a view of the other: torchviz joins them with a dotted edge
    x = torch.ones(4, requires_grad=True)
    base = x * 2
    view = base[:2]
    graph = draw_graph((base, view), params={"x": x, "base": base, "view": view})
    drawn = re.findall(r'stroke-dasharray="([\d,]+)"', graph.svg)
    assert len(drawn) == 1  # the one dotted edge, base to view
    keyed = with_key(graph, ["output", "view"])
    key = keyed.svg[keyed.svg.index('<g class="key">'):]
    assert re.findall(r'stroke-dasharray="([\d,]+)"', key) == drawn
    assert "a tensor to its view" in keyed.description
