"""Every _require_ function of Simple Grad only checks: Double backward at work times the
engine with all of them made no-ops, so the engine must compute the same without them."""
import torch

from gradbook import simple_grad
from gradbook.simple_grad import Variable, grad, quiet_trace, reset_tape


def hessian_vector_product():
    """H v of sum(w x^3) + (sum x)^2 by two grads, using *, +, sum, expand."""
    reset_tape()
    x = Variable.constant(torch.tensor([1.0, -2.0, 0.5]), name="x")
    w = Variable.constant(torch.tensor([0.3, 1.0, -1.5]), name="w")
    total = x.sum()
    loss = (w * x * x * x).sum() + total * total
    (dloss_dx,) = grad(loss, [x])
    direction = Variable.constant(torch.tensor([1.0, 0.0, 2.0]), name="v")
    (hvp,) = grad((dloss_dx * direction).sum(), [x])
    return hvp.value


def test_every_check_returns_nothing(monkeypatch):
    with quiet_trace():
        expected = hessian_vector_product()
    returned = []
    for name, function in list(vars(simple_grad).items()):
        if name.startswith("_require_"):

            def recording(*args, _function=function, **kwargs):
                returned.append(_function(*args, **kwargs))

            monkeypatch.setattr(simple_grad, name, recording)
    with quiet_trace():
        torch.testing.assert_close(hessian_vector_product(), expected)
    assert returned and all(value is None for value in returned)


def test_the_engine_runs_with_every_check_a_no_op(monkeypatch):
    with quiet_trace():
        expected = hessian_vector_product()
    for name in list(vars(simple_grad)):
        if name.startswith("_require_"):
            monkeypatch.setattr(simple_grad, name, lambda *a, **k: None)
    with quiet_trace():
        torch.testing.assert_close(hessian_vector_product(), expected)
