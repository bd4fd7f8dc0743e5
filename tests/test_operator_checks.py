"""check_operator fires on each of eight broken sinh operators (and on a setup_context
with other parameter names), and names the fix;
dispatch_facts reads what the Custom operators chapter's dispatch drawing states."""
import numpy as np
import pytest
import torch

from gradbook.operator_checks import check_operator, dispatch_facts


def numpy_op(function, *tensors):
    """The chapter's helper: a NumPy function applied to tensors, hidden from autograd."""
    arrays = [tensor.detach().numpy() for tensor in tensors]
    return torch.from_numpy(np.asarray(function(*arrays)))


def sinh_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def cosh_backward(ctx, grad):
    return grad * torch.cosh(ctx.saved_tensors[0])


def operator(name, kernel=np.sinh, fake=torch.empty_like,
             backward=cosh_backward, cast=None):
    def forward(x: torch.Tensor) -> torch.Tensor:
        result = numpy_op(kernel, x)
        return result if cast is None else result.to(cast)

    op = torch.library.custom_op(f"checks::{name}", mutates_args=())(forward)
    op.register_fake(fake)
    op.register_autograd(backward, setup_context=sinh_setup)
    return op


@torch.no_grad()  # PyTorch operations, traceable, but nothing recorded
def no_grad_backward(ctx, grad):
    return grad * torch.cosh(ctx.saved_tensors[0])


BROKEN = {  # name -> (operator's arguments, {check: words of its advice})
    # a backward whose own derivative is lost
    "sinh_detached": (
        {"backward": lambda ctx, grad:
            grad * torch.cosh(ctx.saved_tensors[0]).detach()},
        {"gradgradcheck": "own derivative"}),
    "sinh_no_grad": ({"backward": no_grad_backward},
                     {"gradgradcheck": "records nothing"}),  # and only it
    # fakes with the wrong dtype, the default dtype, a fixed shape, strides
    "sinh_wrong_fake": (
        {"fake": lambda x: x.new_empty(x.shape, dtype=int)},
        {"opcheck": "from the inputs"}),
    "sinh_default_fake": ({"fake": lambda x: torch.empty(x.shape)},
                          {"opcheck": "from the inputs"}),
    "sinh_fixed_shape": (
        {"fake": lambda x: torch.empty(3, dtype=x.dtype)},
        {"opcheck": "from the inputs"}),
    "sinh_contiguous_fake": (  # NumPy keeps x.T's layout, the fake does not
        {"fake": lambda x: torch.empty(x.shape, dtype=x.dtype)},
        {"opcheck": "from the inputs"}),
    # consistent, but another function
    "cosh_not_sinh": (
        {"kernel": np.cosh, "backward": lambda ctx, grad:
            grad * torch.sinh(ctx.saved_tensors[0])},
        {"values": "another function"}),
    # the right fake: the kernel is wrong
    "sinh_float64_kernel": ({"cast": torch.float64},
                            {"opcheck": "fix the kernel"}),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_check_operator_fires_on_each_broken_operator(name, capsys):
    arguments, expected = BROKEN[name]
    check_operator(operator(name, **arguments))
    found = check_operator.found
    printed = capsys.readouterr().out
    if name == "sinh_no_grad":  # opcheck and compile pass: it traces
        assert set(found) == {"gradgradcheck"}
    for check, words in expected.items():
        assert words in found[check], (check, found)
        if check != "values":
            assert words in printed.replace("\n       ", " ")
    assert "Correct" not in printed


def test_check_operator_names_an_undeclared_write(capsys):
    @torch.library.custom_op("checks::sinh_writes_x", mutates_args=())
    def writes_x(x: torch.Tensor) -> torch.Tensor:
        result = numpy_op(np.sinh, x)
        x.mul_(2)  # a write that mutates_args=() does not declare
        return result

    writes_x.register_fake(torch.empty_like)
    writes_x.register_autograd(cosh_backward, setup_context=sinh_setup)
    check_operator(writes_x)
    found = check_operator.found
    assert "mutates_args" in found["opcheck"]
    assert "mutates_args" in found["gradcheck"]
    assert "mutates_args" in capsys.readouterr().out


def test_check_operator_passes_a_correct_operator(capsys):
    check_operator(operator("sinh_right"))
    assert check_operator.found == {}
    assert "Correct: every check passes" in capsys.readouterr().out


def test_check_operator_names_a_missing_fake_and_backward(capsys):
    @torch.library.custom_op("checks::sinh_bare", mutates_args=())
    def bare(x: torch.Tensor) -> torch.Tensor:
        return numpy_op(np.sinh, x)

    check_operator(bare)
    assert "register_fake" in check_operator.found["opcheck"]
    assert "register_autograd" in check_operator.found["gradcheck"]


def test_check_operator_names_setup_context_parameters(capsys):
    # the mistake the chapter warns about: other parameter names. The compile
    # error says "when making fake tensor call" though the fake is there, so
    # the advice must come from the error behind it, not suggest a fake.
    def renamed_setup(ctx, i, o):
        ctx.save_for_backward(*i)

    op = operator("sinh_renamed_setup")
    op.register_autograd(cosh_backward, setup_context=renamed_setup)
    check_operator(op)
    found = check_operator.found
    assert set(found) == {"opcheck", "gradcheck", "gradgradcheck", "compile"}
    for hint in found.values():
        assert "ctx, inputs, output" in hint and "register_fake" not in hint
    printed = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert "caused by: " in printed
    assert "renamed_setup() got an unexpected keyword argument" in printed


def test_check_operator_refuses_what_is_not_an_operator():
    with pytest.raises(TypeError, match="custom_op"):
        check_operator(torch.sinh)


def test_dispatch_facts_of_an_operator_without_batching_rule():
    @torch.library.custom_op("checks::cube_dispatch", mutates_args=())
    def cube(x: torch.Tensor) -> torch.Tensor:
        return numpy_op(lambda a: a**3, x)

    cube.register_fake(torch.empty_like)
    facts = dispatch_facts("checks::cube_dispatch")
    if torch.__version__.split("+")[0] == "2.14.1":  # where it was checked
        assert facts["keys"] == ["Autograd", "CompositeExplicitAutograd",
                                 "Meta"]
        assert facts["order_holds"]
    assert not facts["batched"]
    assert facts["fake_routes"] == [("Tensor", "meta", False),
                                    ("FakeTensor", "cpu", True)]
    assert facts["excluded"] == {"inside the kernel": True, "outside": False}
    cube.register_vmap(lambda info, in_dims, x: (cube(x), in_dims[0]))
    assert dispatch_facts("checks::cube_dispatch")["batched"]


def test_dispatch_facts_explains_a_bad_name():
    with pytest.raises(ValueError, match="book::cube"):
        dispatch_facts("cube")
    with pytest.raises(ValueError, match="custom_op first"):
        dispatch_facts("checks::never_defined")
