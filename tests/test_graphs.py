"""draw_graph: the same computation gives the same SVG bytes, and bad input is explained."""
import re

import pytest
import torch

import gradbook
from gradbook import GraphvizMissingError, draw_graph


def square_and_its_gradient():
    """A fresh graph on every call, so every node is a new Python object with a new id()."""
    x = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    out = x**2
    (grad_x,) = torch.autograd.grad(out, x, create_graph=True)
    return x, out, grad_x


def test_same_computation_gives_identical_svg():
    drawings, ids = [], []
    for _ in range(2):
        x, out, grad_x = square_and_its_gradient()
        drawings.append(draw_graph((out, grad_x), params={"x": x}).svg)
        ids.append(str(id(out.grad_fn)))
    assert ids[0] != ids[1], "the two graphs should be distinct objects"
    assert drawings[0] == drawings[1]
    assert ids[0] not in drawings[0]


def test_no_python_id_survives_in_the_svg():
    x, out, grad_x = square_and_its_gradient()
    svg = draw_graph((out, grad_x), show_saved=True).svg
    # Python ids are 12+ digit numbers; node names must all be the relabelled ones.
    assert not re.search(r"\d{9,}", svg)
    titles = re.findall(r"<title>(.*?)</title>", svg)
    node_titles = [t for t in titles if "&#45;&gt;" not in t and t != "%3"]
    assert node_titles and all(re.fullmatch(r"node\d+", t) for t in node_titles)


def test_several_outputs_and_named_params_are_labelled():
    x, out, grad_x = square_and_its_gradient()
    svg = draw_graph((out, grad_x), params={"x": x, "out": out, "grad_x": grad_x}).svg
    for name in ("x", "out", "grad_x"):
        assert f">{name}</text>" in svg


def test_show_saved_draws_saved_tensors():
    x = torch.tensor(2.0, requires_grad=True)
    out = x.exp()
    without = draw_graph(out).svg
    with_saved = draw_graph(out, show_saved=True).svg
    # ExpBackward saves its result; torchviz labels that node "result" in orange.
    assert ">result</text>" in with_saved and ">result</text>" not in without


def test_graph_has_an_opaque_background_and_a_stable_repr():
    x, out, grad_x = square_and_its_gradient()
    graph = draw_graph(out)
    assert 'fill="white"' in graph.svg
    assert repr(graph) == f"<graph with {graph.node_count} nodes>"
    assert "0x" not in repr(graph)


def test_description_names_tensors_by_role_and_the_backward_nodes():
    x = torch.ones(2, 3, requires_grad=True)
    loss = (x.exp() * 2).sum()
    description = draw_graph(loss, params={"x": x, "loss": loss}).description
    assert "outputs: loss of shape ()" in description
    assert "leaves: x of shape (2, 3)" in description
    for node in ("SumBackward0", "MulBackward0", "ExpBackward0", "AccumulateGrad"):
        assert node in description


def test_html_is_inline_svg_with_an_accessible_name_and_no_clashing_ids():
    x, out, grad_x = square_and_its_gradient()
    graph = draw_graph((out, grad_x), params={"x": x})
    page = graph._repr_html_()
    assert page.startswith("<svg ")
    assert 'role="img"' in page
    assert f'aria-label="{graph.description}"' in page
    assert "<?xml" not in page and " id=" not in page


def test_missing_dot_names_the_package_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no `dot` anywhere
    with pytest.raises(GraphvizMissingError) as error:
        draw_graph(torch.ones(1, requires_grad=True) * 2)
    message = str(error.value)
    for command in ("apt-get install graphviz", "brew install graphviz", "conda install"):
        assert command in message


@pytest.mark.parametrize(
    "outputs, params, expected",
    [
        ([], None, "non-empty tuple of tensors"),
        ((torch.ones(1), 3.0), None, "outputs[1] is a float"),
        (torch.ones(1), ["x"], "params must be a dict"),
        (torch.ones(1), {"x": 1.0}, "'x' -> float"),
    ],
)
def test_bad_arguments_say_what_is_wrong(outputs, params, expected):
    with pytest.raises(TypeError, match=re.escape(expected)):
        draw_graph(outputs, params=params)


def test_module_exports_what_the_chapters_use():
    for name in gradbook.__all__:
        assert hasattr(gradbook, name)


def test_loose_saved_edges_keep_a_saved_leaf_on_top_and_list_the_arrows():
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
    loss = ((a + b) * b).sum()  # MulBackward0 saves the leaf b
    params = {"a": a, "b": b}
    tangled = draw_graph(loss, params=params, show_saved=True)
    loose = draw_graph(loss, params=params, show_saved=True, loose_saved_edges=True)
    assert loose.description == tangled.description
    assert loose.node_count == tangled.node_count
    assert "stroke-dasharray" in loose.svg and "stroke-dasharray" not in tangled.svg
    # arrows follow the forward direction, from the leaves' AccumulateGrad to the loss
    assert ("AddBackward0", "MulBackward0") in loose.edges
    assert ("MulBackward0", "SumBackward0") in loose.edges
    assert loose.edges == tangled.edges

    def top(svg, label):
        # y of the node's text: smaller is higher on the page
        match = re.search(rf'y="(-?[\d.]+)"[^>]*>{label}</text>', svg)
        return float(match.group(1))

    assert top(loose.svg, "b") < top(loose.svg, "MulBackward0")
    assert top(tangled.svg, "MulBackward0") < top(tangled.svg, "b")


def partition_graphs(partition):
    """The forward and backward FX graphs of sum((a + b) * b) under one partition."""
    from functorch.compile import aot_function, make_boxed_func

    graphs = {}

    def keep(kind):
        def compiler(graph_module, example_inputs):
            graphs[kind] = graph_module
            return make_boxed_func(graph_module.forward)

        return compiler

    compiled = aot_function(
        lambda a, b: ((a + b) * b).sum(),
        fw_compiler=keep("forward"),
        bw_compiler=keep("backward"),
        partition_fn=partition,
    )
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
    compiled(a, b).backward()
    return graphs["forward"], graphs["backward"]


def test_draw_partition_shows_the_cut_and_what_is_computed_again():
    from functorch.compile import default_partition, min_cut_rematerialization_partition

    default = gradbook.draw_partition(*partition_graphs(default_partition))
    assert default.saved == ["primals_2", "add"] and default.recomputed == []
    assert ("add", "backward:mul_1") in default.edges  # crosses the cut
    assert "saved (crossing the cut, orange border): primals_2, add;" in default.description
    min_cut = gradbook.draw_partition(*partition_graphs(min_cut_rematerialization_partition))
    assert min_cut.saved == ["primals_1", "primals_2"] and min_cut.recomputed == ["add"]
    assert ("primals_1", "backward:add") in min_cut.edges
    assert min_cut.svg.count("stroke-dasharray") == 1  # the recomputed add's border
    # the same graphs give the same bytes
    again = gradbook.draw_partition(*partition_graphs(min_cut_rematerialization_partition))
    assert again.svg == min_cut.svg


def test_draw_partition_refuses_graphs_of_two_partitions():
    from functorch.compile import default_partition, min_cut_rematerialization_partition

    forward, _ = partition_graphs(min_cut_rematerialization_partition)
    _, backward = partition_graphs(default_partition)  # reads add, not handed over
    with pytest.raises(ValueError, match="pass the two graphs of one partition"):
        gradbook.draw_partition(forward, backward)


def svg_height(graph):
    return float(re.search(r'<svg[^>]* height="([0-9.]+)pt"', graph.svg).group(1))


def test_a_smaller_rank_gap_draws_a_deep_graph_shorter():
    x, out, grad_x = square_and_its_gradient()
    default = draw_graph(grad_x, params={"x": x})
    compact = draw_graph(grad_x, params={"x": x}, rank_gap=0.15)
    assert compact.node_count == default.node_count
    assert svg_height(compact) < 0.8 * svg_height(default)
    with pytest.raises(TypeError, match="rank_gap must be a positive number"):
        draw_graph(grad_x, rank_gap="0.15")


def test_loosening_only_saved_leaves_puts_a_saved_intermediate_below_its_node():
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
    loss = ((a * b) * b).sum()  # the second MulBackward0 saves a * b, no leaf
    params = {"a": a, "b": b}
    loose = draw_graph(loss, params=params, show_saved=True, loose_saved_edges=True)
    leaves_only = draw_graph(
        loss, params=params, show_saved=True, loose_saved_edges="leaves", node_gap=0.1
    )
    assert leaves_only.description == loose.description
    assert leaves_only.edges == loose.edges

    def y_of(svg, label):  # of the node's first text line: smaller is higher
        return float(re.search(rf'y="(-?[\d.]+)"[^>]*>{label}</text>', svg).group(1))

    def width(graph):
        return float(re.search(r'<svg width="([\d.]+)pt"', graph.svg).group(1))

    # the saved intermediate (self) is on the top row when every line is loose,
    # below the leaves when only the leaves' lines are
    assert y_of(loose.svg, "self") == y_of(loose.svg, "a")
    assert y_of(leaves_only.svg, "self") > y_of(leaves_only.svg, "MulBackward0")
    assert y_of(leaves_only.svg, "b") < y_of(leaves_only.svg, "MulBackward0")
    assert width(leaves_only) < width(loose)
    assert leaves_only.svg.count("stroke-dasharray") == loose.svg.count("stroke-dasharray")


@pytest.mark.parametrize("loose", [False, True, "leaves"])
def test_a_saved_leaf_is_drawn_as_a_leaf_whatever_the_order_of_the_walk(loose):
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64, requires_grad=True)
    # torchviz reaches b's AccumulateGrad before the inner MulBackward0 that saves b again,
    # so its last declaration of b is the saved one (orange, labelled "other")
    loss = (b * (a * b)).sum()
    graph = draw_graph(loss, params={"a": a, "b": b}, show_saved=True, loose_saved_edges=loose)
    # two leaves, one saved intermediate (a * b, saved by the outer node as "other")
    assert "leaves: b of shape (3), a of shape (3);" in graph.description
    assert "saved tensors: other of shape (3);" in graph.description
    assert graph.svg.count('fill="lightblue"') == 2
    assert graph.svg.count('fill="orange"') == 1
    assert ">b</text>" in graph.svg


def test_a_custom_functions_saved_leaf_stays_orange():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    graph = draw_graph(Square.apply(x).sum(), params={"x": x}, show_saved=True)
    # saved_leaves.outline_saved_leaves counts on these orange fills
    assert graph.svg.count('fill="orange"') == 1
    assert graph.svg.count('fill="lightblue"') == 0


@pytest.mark.parametrize(
    "kwargs, error, expected",
    [
        ({"loose_saved_edges": "all"}, ValueError, "True, False or 'leaves'"),
        ({"node_gap": 0}, TypeError, "node_gap must be a positive number"),
    ],
)
def test_bad_layout_options_say_what_is_wrong(kwargs, error, expected):
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(error, match=expected):
        draw_graph((x * x).sum(), **kwargs)
