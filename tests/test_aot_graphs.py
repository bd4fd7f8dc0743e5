"""gradbook.aot_graphs: What a compiler sees' helpers, imported by Compiled backwards."""
import ast
import inspect
import json

import torch
from functorch.compile import min_cut_rematerialization_partition

from conftest import BOOK
from gradbook import aot_graphs

NAMES = ("fx_code", "trace", "saved")


def _without_docstring(function_node):
    body = function_node.body
    if (body and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        function_node.body = body[1:]
    return ast.dump(function_node)


def _definitions_on_the_page():
    notebook = json.loads((BOOK / "what_a_compiler_sees.ipynb").read_text())
    found = {}
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "\n".join(
            line for line in "".join(cell["source"]).splitlines()
            if not line.startswith(("%", "!"))
        )
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in NAMES:
                found[node.name] = _without_docstring(node)
    return found


def test_the_helpers_are_the_ones_the_chapter_shows():
    on_the_page = _definitions_on_the_page()
    assert set(on_the_page) == set(NAMES)
    for name in NAMES:
        (node,) = ast.parse(inspect.getsource(getattr(aot_graphs, name))).body
        assert _without_docstring(node) == on_the_page[name], name


def _simple(a, b):
    t = a + b
    return (t * b).sum()


def test_trace_keeps_three_graphs_and_saved_counts_bytes():
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    b = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64)
    compiled, graphs = aot_graphs.trace(_simple, a, b)
    assert set(graphs) == {"joint", "forward", "backward"}
    assert "aten.add" in graphs["joint"] and "torch.ops" not in graphs["joint"]
    code = aot_graphs.fx_code(graphs["forward"])
    assert "aten.mul" in code and "= None" not in code
    # the default partition saves b and t = a + b, 24 bytes each
    assert aot_graphs.saved(graphs) == [("primals_2", 24), ("add", 24)]
    _, min_cut = aot_graphs.trace(
        _simple, a, b, partition=min_cut_rematerialization_partition
    )
    assert [name for name, _ in aot_graphs.saved(min_cut)] == [
        "primals_1", "primals_2"
    ]
    x, y = (v.clone().requires_grad_() for v in (a, b))
    torch.testing.assert_close(compiled(x, y), _simple(a, b))


def test_kernel_bytes_counts_one_more_vector_written_when_t_is_saved():
    import pytest
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.partitioners import default_partition
    from torch._inductor.compile_fx import compile_fx_inner
    from torch._inductor.utils import run_and_get_code

    saving_t = aot_autograd(fw_compiler=compile_fx_inner,
                            bw_compiler=compile_fx_inner,
                            partition_fn=default_partition)
    moved = {}
    for name, backend in (("recompute t", "inductor"), ("save t", saving_t)):
        torch._dynamo.reset()
        a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
        b = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64, requires_grad=True)
        compiled = torch.compile(_simple, backend=backend)
        _, codes = run_and_get_code(
            lambda: torch.autograd.grad(compiled(a, b), [a, b]))
        moved[name] = [aot_graphs.kernel_bytes(code, 8) for code in codes]
    assert moved["recompute t"] == [(48, 8), (56, 48)]
    assert moved["save t"] == [(48, 32), (56, 48)]
    with pytest.raises(ValueError, match="def call"):
        aot_graphs.kernel_bytes("print(1)", 8)
    with pytest.raises(ValueError, match="element_size"):
        aot_graphs.kernel_bytes(codes[0], 0)
