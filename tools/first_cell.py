"""The first code cell of every chapter: on Colab (or any Python without the book's helper
module) it installs gradbook from the repository, with torchviz, and Graphviz when `dot` is
missing. Where the book's environment is complete it does nothing and prints nothing, so nbval
sees the same outputs as before.

usage: python tools/first_cell.py   (inserts or updates the cell in every chapter in book/)

tests/test_first_cell.py checks that every chapter starts with exactly this cell and runs it
in a fresh environment, with GRADBOOK_SOURCE pointing at the local checkout.
"""
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
MARKER = "# Colab, or a Python without the book's helper module: install it."
FIRST_CELL = f'''{MARKER}
# Where the book's environment is complete (Binder, make book): nothing.
import importlib.util
import os
import shutil
import subprocess
import sys

if importlib.util.find_spec("gradbook") is None:
    REPOSITORY = "git+https://github.com/autograd-book/autograd-book"
    source = os.environ.get("GRADBOOK_SOURCE", f"gradbook @ {{REPOSITORY}}")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", source]
    subprocess.run(pip, check=True)
    if shutil.which("dot") is None:  # torchviz draws with Graphviz
        apt = ["apt-get", "install", "--yes", "--quiet", "graphviz"]
        subprocess.run(apt, check=True)'''
# Plumbing, not teaching: the site leaves the cell out; notebooks, Binder and Colab run it.
TAGS = ["remove-cell"]


def chapters():
    # tests/test_notebooks.py checks that book/'s notebooks are exactly the chapters of _toc.yml.
    return sorted((ROOT / "book").glob("*.ipynb"))


def put_first_cell(path):
    """Make FIRST_CELL the notebook's first code cell; return whether the file changed."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if code and code[0].source.startswith(MARKER):
        if code[0].source == FIRST_CELL and code[0].metadata.get("tags") == TAGS:
            return False
        code[0].source = FIRST_CELL
        code[0].metadata["tags"] = TAGS
    else:
        position = notebook.cells.index(code[0]) if code else len(notebook.cells)
        cell = nbformat.v4.new_code_cell(FIRST_CELL, metadata={"tags": TAGS})
        notebook.cells.insert(position, cell)
        _count_from_one(notebook)
    nbformat.write(notebook, path)
    return True


def _count_from_one(notebook):
    """Renumber a stored run as if the new first cell had run first. It prints nothing and
    defines nothing the chapter uses where gradbook is installed, so every stored output stays
    what a fresh run gives (nbval checks exactly that)."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if code[1:] and code[1].execution_count is None:
        return  # never executed: nothing to renumber
    for count, cell in enumerate(code, start=1):
        cell.execution_count = count
        for output in cell.outputs:
            if output.output_type == "execute_result":
                output.execution_count = count


if __name__ == "__main__":
    changed = [path for path in chapters() if put_first_cell(path)]
    for path in changed:
        print(f"updated {path.relative_to(ROOT)}")
