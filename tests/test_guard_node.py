"""The guard node Compiled backwards' alarm looks for, pinned on the installed torch.

`compiled_backward_on_path` (book/compiled_backwards.ipynb) matches the node by name. A release
that renames it would silence the alarm without failing the chapter's quiet routes, so this
test builds a guard node as the chapter's opening does and checks the name and what it does.
"""
import json

import pytest
import torch
from conftest import BOOK
from functorch.compile import aot_function, make_boxed_func

GUARD_NAME = "CompiledFunctionBackwardBackward"  # the name the chapter's alarm matches
CHAPTER = BOOK / "compiled_backwards.ipynb"


def _as_is(graph_module, example_inputs):
    return make_boxed_func(graph_module.forward)


def test_a_first_gradient_out_of_a_compiled_backward_hangs_from_the_guard_node():
    compiled = aot_function(lambda x: torch.exp(x).sum(), _as_is, _as_is)
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (first,) = torch.autograd.grad(compiled(x), [x], create_graph=True)
    assert first.grad_fn is not None and first.grad_fn.name() == GUARD_NAME
    # x reaches the guard only through its empty leaf: x * first sees the direct path alone
    (partial,) = torch.autograd.grad((x * first).sum(), [x])
    torch.testing.assert_close(partial, x.detach().exp())


def test_the_chapter_s_alarm_matches_this_name():
    # the test pins the name only if it is the one the alarm compares with
    cells = json.loads(CHAPTER.read_text())["cells"]
    (alarm,) = [
        "".join(cell["source"]) for cell in cells
        if "def compiled_backward_on_path" in "".join(cell["source"])
    ]
    assert f'node.name() == "{GUARD_NAME}"' in alarm


def test_the_guard_raises_when_its_input_requires_a_gradient():
    # the default partition saves b: the guard holds b's AccumulateGrad, and
    # differentiating through it raises
    compiled = aot_function(lambda a, b: ((a + b) * b).sum(), _as_is, _as_is)
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64, requires_grad=True)
    _, db = torch.autograd.grad(compiled(a, b), [a, b], create_graph=True)
    assert db.grad_fn.name() == GUARD_NAME
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(db.sum(), [b])
