"""Export the Simple Grad engine from its chapter into the module the later chapters import.

Chapter 1 (book/simple_grad_1_tape.ipynb) builds the engine in code cells whose first line is
``#@save``. This script joins those cells, in order and without the marker line, under a fixed
header, into book/gradbook/simple_grad.py. The chapter is the one source of truth: edit it,
re-run it, then run this script.

usage: python tools/export_saved_cells.py          rewrite the module from the chapter
       python tools/export_saved_cells.py --check  exit 1, saying what differs, if they drifted
"""
import difflib
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "book" / "simple_grad_1_tape.ipynb"
MODULE = ROOT / "book" / "gradbook" / "simple_grad.py"
MARKER = "#@save"
HEADER = '''"""Simple Grad: a tape-based reverse-mode autodiff engine over torch tensors.

GENERATED FILE, do not edit. The code below is the `#@save` cells of
book/simple_grad_1_tape.ipynb, where it is explained; edit the chapter, then run
`python tools/export_saved_cells.py` (tests/test_simple_grad_export.py fails until you do).
"""
'''


def saved_cells(chapter):
    """The source of every code cell whose first line is the marker, marker line removed."""
    notebook = nbformat.read(chapter, as_version=4)
    cells = []
    for cell in notebook.cells:
        lines = cell.source.splitlines()
        # `ruff format` writes the marker as "# @save"; both spellings count
        marker = lines[0].replace(" ", "") if lines else ""
        if cell.cell_type == "code" and marker == MARKER:
            cells.append("\n".join(lines[1:]).strip("\n"))
    if not cells:
        raise ValueError(f"{chapter} has no code cell starting with {MARKER!r}: nothing to export.")
    return cells


def module_text(chapter):
    return HEADER + "".join(f"\n{cell}\n\n" for cell in saved_cells(chapter)).rstrip("\n") + "\n"


def drift(chapter=None, module=None):
    """'' when the module is exactly what the chapter exports, otherwise what differs."""
    chapter, module = chapter or CHAPTER, module or MODULE
    expected = module_text(chapter)
    actual = module.read_text() if module.exists() else ""
    if actual == expected:
        return ""
    diff = difflib.unified_diff(
        actual.splitlines(), expected.splitlines(), str(module), f"export of {chapter}", lineterm=""
    )
    shown = list(diff)[:40]
    return (
        f"{module} is not the export of the #@save cells of {chapter}.\n"
        "Edit the chapter (never the module), then run: python tools/export_saved_cells.py\n"
        + "\n".join(shown)
    )


def main(arguments):
    if arguments not in ([], ["--check"]):
        sys.exit(__doc__)
    if arguments == ["--check"]:
        problem = drift()
        if problem:
            sys.exit(problem)
        print(f"{MODULE.relative_to(ROOT)} matches {CHAPTER.relative_to(ROOT)}")
        return
    MODULE.write_text(module_text(CHAPTER))
    print(f"wrote {MODULE.relative_to(ROOT)} from the {MARKER} cells of "
          f"{CHAPTER.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
