import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck

from gradbook.fused_demo import centred_statistics_by_norm


def reference(y, eps):
    variance, mean = torch.var_mean(y, dim=(0, 2, 3), unbiased=False, keepdim=True)
    return mean, torch.rsqrt(variance + eps)


def test_matches_var_mean_in_float64():
    y = torch.randn(3, 4, 5, 6, dtype=torch.float64) * 2 + 7
    for ours, theirs in zip(centred_statistics_by_norm(y, 1e-5), reference(y, 1e-5)):
        torch.testing.assert_close(ours, theirs)
        assert ours.shape == (1, 4, 1, 1)


def test_accurate_in_float32_with_a_large_mean():
    y64 = torch.randn(8, 3, 6, 6, dtype=torch.float64) + 1e3
    _, exact = reference(y64, 1e-5)
    _, ours = centred_statistics_by_norm(y64.float(), 1e-5)
    torch.testing.assert_close(ours.double(), exact, rtol=1e-4, atol=0)


def test_differentiable_twice():
    y = torch.randn(2, 3, 3, 3, dtype=torch.float64, requires_grad=True)

    def both(t):
        return centred_statistics_by_norm(t, 1e-5)

    assert gradcheck(both, (y,))
    assert gradgradcheck(both, (y,))


@pytest.mark.parametrize(
    "y, eps, words",
    [
        (torch.randn(3, 4), 1e-5, "4-D tensor"),
        ([1.0], 1e-5, "4-D tensor"),
        (torch.ones(2, 3, 4, 4, dtype=torch.int64), 1e-5, "floating-point"),
        (torch.randn(2, 3, 4, 4), 0.0, "positive number"),
        (torch.randn(2, 3, 4, 4), True, "positive number"),
        (torch.randn(0, 3, 4, 4), 1e-5, "no values per channel"),
    ],
)
def test_bad_arguments_say_what_to_do(y, eps, words):
    with pytest.raises(ValueError, match=words):
        centred_statistics_by_norm(y, eps)
