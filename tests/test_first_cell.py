"""Every chapter opens with the cell that installs the helper module on Colab, and that cell
really installs it into a Python that lacks it."""
import shutil
import subprocess
import sys
import sysconfig
import venv

import nbformat
import pytest

from book_files import book_notebooks
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from first_cell import FIRST_CELL, TAGS  # noqa: E402  (tools/ is not a package)


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_every_chapter_starts_with_the_install_cell(path):
    code = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    assert code and code[0].source == FIRST_CELL and code[0].metadata.get("tags") == TAGS, (
        f"{path.name}: run `python tools/first_cell.py`, then `make outputs NB=book/{path.name}`"
    )


def test_the_install_cell_installs_gradbook_where_it_is_missing(tmp_path):
    # A wheel of the local checkout stands in for the repository URL that Colab installs from;
    # it is built from a copy, since setuptools writes build files next to the sources.
    source = tmp_path / "source"
    shutil.copytree(ROOT / "book" / "gradbook", source / "book" / "gradbook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "LICENSE"):
        shutil.copy(ROOT / name, source)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(wheels), str(source)],
        check=True, cwd=tmp_path,
    )
    (wheel,) = wheels.glob("gradbook-*.whl")
    # A fresh environment that sees this one's packages (torch, torchviz) but not gradbook.
    fresh = tmp_path / "fresh"
    # No pip of its own: the pip it borrows from this environment installs into the fresh one.
    venv.create(fresh, with_pip=False)
    python = fresh / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    (tmp_path / site / "book-environment.pth").write_text(sysconfig.get_paths()["purelib"])

    def run(code):
        return subprocess.run(
            [python, "-c", code], cwd=tmp_path, capture_output=True, text=True,
            env={"GRADBOOK_SOURCE": str(wheel), "PATH": "/usr/bin:/bin"},
        )

    assert run("import gradbook").returncode != 0, "the fresh environment already has gradbook"
    installed = run(FIRST_CELL)
    assert installed.returncode == 0, installed.stderr
    imported = run("import gradbook; print(gradbook.__file__); print(gradbook.draw_graph)")
    assert imported.returncode == 0, imported.stderr
    assert str(fresh) in imported.stdout.splitlines()[0]
