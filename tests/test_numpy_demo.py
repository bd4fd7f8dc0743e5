"""gradbook.numpy_demo: numpy_op, NumPy hidden from autograd."""

import pytest
import torch

from gradbook.numpy_demo import numpy_op


def test_numpy_op_computes_and_has_no_history():
    x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = numpy_op(lambda a: a**3, x)
    torch.testing.assert_close(y, x.detach() ** 3)
    assert y.dtype == torch.float64
    assert not y.requires_grad and y.grad_fn is None


def test_numpy_op_takes_several_tensors():
    g = torch.tensor([0.5, 2.0], dtype=torch.float64)
    x = torch.tensor([2.0, 1.0], dtype=torch.float64)
    y = numpy_op(lambda gg, a: 3 * a**2 * gg, g, x)
    torch.testing.assert_close(y, 3 * x**2 * g)


@pytest.mark.parametrize("args", [(), (1.0,), (torch.ones(2), [1.0])])
def test_numpy_op_refuses_non_tensors(args):
    with pytest.raises(TypeError, match="one or more tensors"):
        numpy_op(lambda *a: a[0], *args)


def test_numpy_op_refuses_a_non_function():
    with pytest.raises(TypeError, match="function of arrays"):
        numpy_op(torch.ones(2), torch.ones(2))
