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


def test_rebuild_main_page_runs_the_chapter_up_to_a_label():
    from gradbook.fused_demo import rebuild_main_page

    namespace = {}
    run = rebuild_main_page(namespace, "fused-recommended")
    assert run >= 3
    assert "BatchNorm2d" in namespace and "Conv2d" in namespace
    assert "BatchNormOfConvolutionTwice" not in namespace  # defined after


def test_rebuild_main_page_explains_bad_arguments(tmp_path):
    from gradbook.fused_demo import rebuild_main_page

    with pytest.raises(ValueError, match="label"):
        rebuild_main_page({}, "no-such-label")
    with pytest.raises(TypeError, match="globals"):
        rebuild_main_page([], "fused-recommended")
    with pytest.raises(FileNotFoundError, match="download"):
        rebuild_main_page({}, "fused-recommended", path=tmp_path / "x.ipynb")


def test_rebuild_main_page_drops_only_expected_errors(tmp_path):
    import json

    from gradbook.fused_demo import rebuild_main_page

    def page(tags):
        cells = [
            {"cell_type": "code", "metadata": {}, "source": "raise SystemExit"},
            {"cell_type": "code", "metadata": {"tags": tags},
             "source": "%xmode Minimal\nseen = 1\n1 / 0"},
            {"cell_type": "code", "metadata": {}, "source": "after = seen + 1"},
            {"cell_type": "markdown", "metadata": {}, "source": "(end)=\n## End"},
        ]
        path = tmp_path / f"page{len(tags)}.ipynb"
        path.write_text(json.dumps({"cells": cells}))
        return path

    namespace = {}
    assert rebuild_main_page(namespace, "end", path=page(["raises-exception"])) == 2
    assert namespace["after"] == 2
    with pytest.raises(ZeroDivisionError):
        rebuild_main_page({}, "end", path=page([]))


def test_rebuild_main_page_shows_no_drawing(tmp_path, monkeypatch):
    import json

    import matplotlib
    import matplotlib.pyplot as plt

    from gradbook.fused_demo import rebuild_main_page

    matplotlib.use("Agg")
    shown = []
    monkeypatch.setattr(plt, "show", lambda *a, **k: shown.append(1))
    cells = [
        {"cell_type": "code", "metadata": {}, "source": "pass"},
        {"cell_type": "code", "metadata": {},
         "source": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()"},
        {"cell_type": "markdown", "metadata": {}, "source": "(end)=\n## End"},
    ]
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    rebuild_main_page({}, "end", path=path)
    assert shown == [] and plt.get_fignums() == []
    plt.show()
    assert shown == [1]  # restored afterwards



def test_second_derivative_nan_on_a_constant_channel_as_documented():
    # the docstring's caveat: a zero norm has a NaN second derivative, where
    # var_mean's stays finite; the first derivative is finite for both
    y = torch.randn(2, 3, 3, 3, dtype=torch.float64)
    y[:, 1] = 0.5
    results = []
    for statistics in (centred_statistics_by_norm, reference):
        leaf = y.clone().requires_grad_()
        _, inv_std = statistics(leaf, 1e-5)
        (first,) = torch.autograd.grad(inv_std.sum(), leaf, create_graph=True)
        (second,) = torch.autograd.grad((first * first).sum(), leaf)
        results.append((first, second))
    (first, second), (first_ref, second_ref) = results
    torch.testing.assert_close(first, first_ref)
    assert torch.isnan(second[:, 1]).all()
    assert torch.isfinite(second_ref).all()
    torch.testing.assert_close(second[:, [0, 2]], second_ref[:, [0, 2]])


@pytest.mark.parametrize("first_line", ["%%time", "!pip list"])
def test_rebuild_main_page_refuses_what_python_cannot_run(tmp_path, first_line):
    import json

    from gradbook.fused_demo import rebuild_main_page

    cells = [
        {"cell_type": "code", "metadata": {}, "source": "# install cell"},
        {"cell_type": "code", "metadata": {}, "source": f"{first_line}\nx = 1"},
        {"cell_type": "markdown", "metadata": {}, "source": "(end)=\n## End"},
    ]
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    with pytest.raises(ValueError, match="cell magic or a shell command"):
        rebuild_main_page({}, "end", path=path)
