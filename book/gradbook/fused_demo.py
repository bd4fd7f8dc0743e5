"""Batch-norm statistics for the fused convolution + batch norm chapter.

``centred_statistics_by_norm(y, eps)`` gives the per-channel mean and
1/sqrt(variance + eps) of an (N, C, H, W) tensor in two passes, as accurate
as the mean of squared deviations, with one full-size temporary (the
deviations): the sum of their squares is ``torch.linalg.vector_norm``'s
reduction, not a second full-size tensor. Every operation is differentiable,
so a backward that calls it under ``create_graph=True`` is recorded.
"""

import torch

CHANNEL_DIMS = (0, 2, 3)


def centred_statistics_by_norm(y, eps):
    """Per-channel mean and 1/sqrt(biased variance + eps) of y, each shaped
    (1, C, 1, 1): the mean, then the squared norm of y - mean over batch
    and pixels, divided by their count."""
    if not isinstance(y, torch.Tensor) or y.dim() != 4:
        raise ValueError(
            "centred_statistics_by_norm: y must be a 4-D tensor (N, C, H, W), "
            f"got {type(y).__name__}"
            + (f" of shape {tuple(y.shape)}" if isinstance(y, torch.Tensor) else "")
            + "; reshape it to (N, C, H, W) first."
        )
    if not y.is_floating_point():
        raise ValueError(
            f"centred_statistics_by_norm: y has dtype {y.dtype}; pass a floating-point "
            "tensor, e.g. y.float()."
        )
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps <= 0:
        raise ValueError(
            f"centred_statistics_by_norm: eps={eps!r}; pass a positive number, "
            "such as nn.BatchNorm2d's default 1e-5."
        )
    count = y.numel() // y.shape[1]
    if count == 0:
        raise ValueError(
            f"centred_statistics_by_norm: y of shape {tuple(y.shape)} has no values per "
            "channel; pass at least one image of at least one pixel."
        )
    mean = y.mean(dim=CHANNEL_DIMS, keepdim=True)
    squares = torch.linalg.vector_norm(y - mean, dim=CHANNEL_DIMS, keepdim=True) ** 2
    return mean, torch.rsqrt(squares / count + eps)
