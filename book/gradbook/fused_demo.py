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
    and pixels, divided by their count.

    Differentiable twice except where a channel is constant: there the
    norm is zero, and its second derivative is NaN (torch.var_mean's stays
    finite). Use torch.var_mean where a channel may be constant (a dead
    ReLU channel, say)."""
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


MAIN_PAGE = "fused_conv_bn.ipynb"


def _main_page_path(path):
    """The chapter's notebook: the path given, else the working directory's
    copy (a page runs from book/), else the one next to this package."""
    from pathlib import Path

    if path is not None:
        candidates = [Path(path)]
    else:
        candidates = [Path.cwd() / MAIN_PAGE,
                      Path(__file__).resolve().parent.parent / MAIN_PAGE]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        "rebuild_main_page: found no " + " or ".join(map(str, candidates))
        + f"; download book/{MAIN_PAGE} from the book's repository into the "
        "working directory, or pass its path as path=."
    )


def _discard(*args, **kwargs):
    """Stands in for pyplot.show while the chapter's cells run."""


def rebuild_main_page(namespace, until_label, path=None):
    """Run the code cells of the fused conv + BN chapter, in order, into
    ``namespace`` (pass ``globals()``), up to the markdown cell that holds the
    label ``(until_label)=``, so that a continuation page has the chapter's
    layers, stems, meter and inputs exactly as the chapter left them.

    Skipped: the first cell (the install cell) and IPython's ``%`` lines.
    A cell tagged ``raises-exception`` runs, and its error is dropped, as the
    page's own run does. What the cells print and draw is discarded. Returns
    the number of code cells run."""
    import contextlib
    import io
    import json
    import sys

    if not isinstance(namespace, dict):
        raise TypeError(
            "rebuild_main_page: namespace must be a dict; pass globals(), "
            f"not {type(namespace).__name__}."
        )
    if not isinstance(until_label, str) or not until_label:
        raise ValueError(
            "rebuild_main_page: until_label must be a label of the chapter, "
            f"such as 'fused-causes', got {until_label!r}."
        )
    cells = json.loads(_main_page_path(path).read_text())["cells"]
    marker = f"({until_label})="
    stop = next(
        (i for i, cell in enumerate(cells) if cell["cell_type"] == "markdown"
         and any(line.strip() == marker
                 for line in "".join(cell["source"]).splitlines())),
        None,
    )
    if stop is None:
        raise ValueError(
            f"rebuild_main_page: no markdown cell of {MAIN_PAGE} holds the "
            f"label {marker}; pass one of the chapter's labels."
        )
    code = [cell for cell in cells[:stop] if cell["cell_type"] == "code"][1:]
    namespace.setdefault("__name__", "__main__")
    run = 0
    for cell in code:
        expected = "raises-exception" in cell.get("metadata", {}).get("tags", [])
        text = "".join(cell["source"])
        if text.lstrip().startswith(("%%", "!")):
            raise ValueError(
                f"rebuild_main_page: a code cell of {MAIN_PAGE} is a cell magic "
                "or a shell command, which plain Python cannot run; write it "
                "as Python (only single-line % magics are skipped)."
            )
        source = "\n".join(
            line for line in text.splitlines()
            if not line.lstrip().startswith("%")
        )
        # pyplot's show would display a drawing at once: silenced per cell
        pyplot = sys.modules.get("matplotlib.pyplot")
        show = pyplot.show if pyplot is not None else None
        if pyplot is not None:
            pyplot.show = _discard
        try:
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                exec(compile(source, f"<{MAIN_PAGE}>", "exec"), namespace)
        except Exception:
            if not expected:
                raise
        finally:
            if pyplot is not None:
                pyplot.show = show
            pyplot = sys.modules.get("matplotlib.pyplot")
            if pyplot is not None:
                pyplot.close("all")
        run += 1
    return run
