import pytest
import torch
import torch.fx

from gradbook.compiler_demo import bytes_written

aten = torch.ops.aten


def product_then_sum(x, y):
    # aten ops, as in AOTAutograd's graphs: every node is a call_function
    z = aten.mul.Tensor(x, y)
    return aten.add.Tensor(z, x), aten.expand.default(z, [2, 4])


def test_counts_new_storages_once_and_views_not():
    graph_module = torch.fx.symbolic_trace(product_then_sum)
    ops = {n.op for n in graph_module.graph.nodes}
    assert ops == {"placeholder", "call_function", "output"}
    x = torch.ones(4, dtype=torch.float64)
    # mul and add: two new tensors of 4 float64; the expand is a view
    assert bytes_written(graph_module, x, x.clone()) == 2 * 4 * 8


def test_an_input_returned_as_it_is_writes_nothing():
    graph_module = torch.fx.symbolic_trace(
        lambda x: aten.view.default(x, [2, 2])
    )
    # dtype given: another test in the same process may change the default
    x = torch.ones(4, dtype=torch.float32)
    assert bytes_written(graph_module, x) == 0
    # a copy of the same input is counted
    graph_module = torch.fx.symbolic_trace(lambda x: aten.clone.default(x))
    assert bytes_written(graph_module, x) == 4 * 4


def test_methods_and_modules_are_counted_too():
    x = torch.ones(1000, dtype=torch.float64)
    methods = torch.fx.symbolic_trace(lambda x: x.mul(2).add(1).view(-1))
    assert {n.op for n in methods.graph.nodes} >= {"call_method"}
    assert bytes_written(methods, x) == 2 * 1000 * 8
    module = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.ReLU()))
    assert {n.op for n in module.graph.nodes} >= {"call_module"}
    assert bytes_written(module, x) == 1000 * 8


def test_wrong_arguments_say_what_to_pass():
    graph_module = torch.fx.symbolic_trace(product_then_sum)
    with pytest.raises(ValueError, match="one value"):
        bytes_written(graph_module, torch.ones(4))
    with pytest.raises(TypeError, match="GraphModule"):
        bytes_written(product_then_sum, torch.ones(4), torch.ones(4))


def test_a_freed_intermediate_is_still_counted():
    # x + 1 dies after its one use: its address must not be taken for
    # the next result's and skipped
    def chain(x):
        return ((x + 1) * 2) * 3

    graph_module = torch.fx.symbolic_trace(chain)
    x = torch.ones(1000, dtype=torch.float64)
    assert bytes_written(graph_module, x) == 3 * 1000 * 8
