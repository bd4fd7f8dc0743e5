import pytest
import torch

from gradbook.hvp_routes import (
    f,
    hvp_routes,
    kept_graph_product,
    problem_of_size,
)


def hessian_of_f_by_hand(x, w):
    # f = sum w x^3 + (sum x)^2: H = diag(6 w x) + 2 (every entry)
    n = x.numel()
    return torch.diag(6 * w * x) + 2 * torch.ones(n, n, dtype=x.dtype)


def test_every_route_gives_the_hand_hessian_times_v():
    x, w, v = problem_of_size(7, seed=0)
    expected = hessian_of_f_by_hand(x, w) @ v
    for name, run in hvp_routes(f, x, w, v).items():
        torch.testing.assert_close(run(), expected, msg=name)
    product = kept_graph_product(f, x, w)
    torch.testing.assert_close(product(v), expected)
    torch.testing.assert_close(product(2 * v), 2 * expected)  # graph kept


def test_problem_of_size_is_float64_and_seeded():
    first, again = problem_of_size(4, seed=3), problem_of_size(4, seed=3)
    assert all(t.dtype == torch.float64 and t.shape == (4,) for t in first)
    assert all(torch.equal(a, b) for a, b in zip(first, again))


@pytest.mark.parametrize("size", [0, -1, 2.0, True])
def test_problem_of_size_rejects_a_bad_size(size):
    with pytest.raises(ValueError, match="positive int"):
        problem_of_size(size, seed=0)


def test_hvp_routes_checks_its_arguments():
    x, w, v = problem_of_size(3, seed=0)
    with pytest.raises(ValueError, match="problem_of_size"):
        hvp_routes(f, x, w, v[:2])
    with pytest.raises(TypeError, match="callable"):
        hvp_routes("f", x, w, v)
