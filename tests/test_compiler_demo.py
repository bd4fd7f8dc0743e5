import pytest
import torch
import torch.fx

from gradbook.compiler_demo import bytes_written


def product_then_sum(x, y):
    z = x * y
    return z + x, z.expand(2, 4)


def test_counts_new_storages_once_and_views_not():
    graph_module = torch.fx.symbolic_trace(product_then_sum)
    x = torch.ones(4, dtype=torch.float64)
    # x * y and z + x: two new tensors of 4 float64; the expand is a view
    assert bytes_written(graph_module, x, x.clone()) == 2 * 4 * 8


def test_an_input_returned_as_it_is_writes_nothing():
    graph_module = torch.fx.symbolic_trace(lambda x: x.view(2, 2))
    assert bytes_written(graph_module, torch.ones(4)) == 0


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
