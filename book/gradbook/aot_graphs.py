"""What a compiler sees' three helpers for reading AOTAutograd's graphs.

book/what_a_compiler_sees.ipynb defines and explains them on the page; later chapters
(book/compiled_backwards.ipynb, book/compiled_known_zeros.ipynb) import them from here instead of repeating them.
tests/test_aot_graphs.py checks that these definitions stay the ones that chapter shows.

- fx_code(graph_module): a graph's Python code, aten.* shortened.
- trace(function, *values, partition=...): run function once through AOTAutograd and keep
  its joint, forward and backward graphs; returns (compiled function, graphs).
- saved(graphs): (name, bytes) of each tensor the forward graph hands to the backward.
- kernel_bytes(code, element_size): (read, written) bytes of the one kernel Inductor's code
  calls, counted from shapes (not on the page: its table is).
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


def kernel_bytes(code, element_size):
    """(bytes read, bytes written) by the one C++ kernel that Inductor's generated ``code``
    calls (a module from ``torch._inductor.utils.run_and_get_code``), counted from the shapes
    in its ``call`` function: an argument the kernel declares ``const`` is read, any other is
    written. A count from shapes, a model of memory traffic: nothing is measured.
    ``element_size`` is the bytes of one element (8 for float64). Used by What a compiler
    sees' *Why recompute* section."""
    if not isinstance(code, str) or "def call(" not in code:
        raise ValueError(
            "kernel_bytes: expected the source of a module Inductor generated, with a "
            "'def call(' function; pass one of the codes that "
            "torch._inductor.utils.run_and_get_code returns."
        )
    if not isinstance(element_size, int) or element_size <= 0:
        raise ValueError(f"kernel_bytes: element_size must be a positive int (8 for float64), "
                         f"got {element_size!r}.")
    import ast

    call = code[code.index("def call(") :]
    call = call[: call.index("\n\n")] if "\n\n" in call else call
    sizes = re.search(r"assert_size_stride_grouped\(\((.*?)\), (\(.*?\)), \(\(", call)
    arguments = re.findall(r"cpp_fused_\w+\((.*?)\)", call)
    signatures = re.findall(r"void\s+kernel\((.*?)\)", code, re.DOTALL)
    if sizes is None or len(arguments) != 1 or len(signatures) != 1:
        raise ValueError(
            "kernel_bytes: expected a call function that checks its inputs' sizes and "
            f"calls exactly one cpp_fused kernel; found {len(arguments)} kernel calls and "
            f"{len(signatures)} kernel signatures. It reads Inductor's C++ backend on CPU "
            "(torch 2.14.1); split a program that makes several kernels."
        )
    names, shapes = sizes.groups()
    numel = {n.strip(): torch.Size(s).numel()
             for n, s in zip(names.split(","), ast.literal_eval(shapes))}
    for buf, shape in re.findall(r"(buf\d+) = empty_strided_cpu\((.*?\)),", call):
        numel[buf] = torch.Size(ast.literal_eval(shape)).numel()
    moved = [0, 0]
    for name, kind in zip(arguments[0].split(", "), signatures[0].split(",")):
        moved["const" not in kind] += numel[name] * element_size
    return tuple(moved)
