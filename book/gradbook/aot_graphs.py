"""What a compiler sees' three helpers for reading AOTAutograd's graphs.

book/what_a_compiler_sees.ipynb defines and explains them on the page; later chapters
(book/compiled_backwards.ipynb) import them from here instead of repeating them.
tests/test_aot_graphs.py checks that these definitions stay the ones that chapter shows.

- fx_code(graph_module): a graph's Python code, aten.* shortened.
- trace(function, *values, partition=...): run function once through AOTAutograd and keep
  its joint, forward and backward graphs; returns (compiled function, graphs).
- saved(graphs): (name, bytes) of each tensor the forward graph hands to the backward.
"""
import copy
import re

import torch
from functorch.compile import aot_function, default_partition
from torch._dynamo.backends.debugging import boxed_nop


def fx_code(graph_module):
    """The graph's Python code, inputs as plain arguments, aten.* shortened."""
    # the graph's Python code, its inputs as plain arguments (AOTAutograd
    # passes two lists), aten.* shortened, and FX's '; add = None' clauses
    # (which free a value after its last use) left out
    plain = torch.fx.Graph()  # a copy with the default code generator
    plain.output(plain.graph_copy(graph_module.graph, {}))
    source = plain.python_code(root_module="self").src
    source = source.replace("torch.ops.aten.", "aten.")
    source = re.sub(r";  (\w+ = )+None$", "", source, flags=re.MULTILINE)
    return "\n".join(line for line in source.splitlines() if line.strip())


def trace(function, *values, partition=default_partition):
    """Run function once through AOTAutograd and keep its joint, forward and
    backward graphs: (compiled, graphs)."""
    graphs = {}

    def keep(kind):
        def compiler(graph_module, example_inputs):
            graphs[kind] = graph_module
            # run as aot_eager does: boxed_nop's code empties the list of
            # arguments it receives (on a copy: the kept graph prints as is)
            return boxed_nop(copy.deepcopy(graph_module), example_inputs)

        return compiler

    def cut(joint, joint_inputs, **options):
        graphs["joint"] = fx_code(joint)  # before the partitioner changes it
        return partition(joint, joint_inputs, **options)

    compiled = aot_function(
        function,
        fw_compiler=keep("forward"),
        bw_compiler=keep("backward"),
        partition_fn=cut,
    )
    inputs = [value.clone().requires_grad_() for value in values]
    outputs = compiled(*inputs)
    assert "backward" not in graphs  # compiled at the first backward
    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
    torch.autograd.grad(sum(output.sum() for output in outputs), inputs)
    return compiled, graphs


def saved(graphs):
    """(name, bytes) of each tensor the forward graph hands to the backward."""
    return [
        (node.name, node.meta["val"].numel() * node.meta["val"].element_size())
        for node in graphs["backward"].graph.find_nodes(op="placeholder")
        if not node.name.startswith("tangents")
    ]
