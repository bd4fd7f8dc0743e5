"""The table of contents, the chapters on disk and what nbval checks are the same set."""
import datetime
import importlib.metadata
import re
from pathlib import Path

import nbformat
import pytest

from book_files import book_notebooks, toc_notebooks, toc_pages
from conftest import ROOT


def test_every_toc_entry_exists():
    for entry in toc_pages():
        matches = list(ROOT.glob(f"{entry}.*"))
        assert matches, f"_toc.yml lists {entry}, but no {entry}.ipynb or {entry}.md exists"


def test_toc_and_book_folder_list_the_same_notebooks():
    in_toc, on_disk = toc_notebooks(), book_notebooks()
    assert on_disk, "book/ holds no notebook"
    assert on_disk - in_toc == set(), "notebooks missing from _toc.yml"
    assert in_toc - on_disk == set(), "notebooks in _toc.yml but not under book/"


def test_nbval_runs_strict_over_the_book(pytestconfig):
    assert pytestconfig.getoption("nbval"), "pytest.ini must pass --nbval"
    assert not pytestconfig.getoption("nbval_lax"), "nbval must compare every output"
    sanitize = Path(pytestconfig.getoption("nbval_sanitize_with"))
    assert sanitize.resolve() == ROOT / "tests" / "sanitize.cfg"
    assert "book" in pytestconfig.getini("testpaths")


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_notebook_is_stored_executed_in_order(path):
    """nbval skips the comparison for a cell stored without an execution count."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.strip()]
    counts = [cell.execution_count for cell in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: re-run it top to bottom"


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_errors_only_in_cells_tagged_raises_exception(path):
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        raised = any(output.output_type == "error" for output in cell.outputs)
        assert tagged == raised, f"{path.name} cell {index}: tagged={tagged} but raised={raised}"


# nbval's tags and first-line comments that leave a cell's output unchecked. What varies
# between runs is printed marked as measured and rewritten by tests/sanitize.cfg instead.
UNCHECKED_TAGS = {"nbval-ignore-output", "nbval-skip"}
UNCHECKED_COMMENTS = ("# NBVAL_IGNORE_OUTPUT", "# NBVAL_SKIP")


def unchecked_cells(notebook):
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        tagged = UNCHECKED_TAGS & set(cell.metadata.get("tags", []))
        if tagged or cell.source.lstrip().startswith(UNCHECKED_COMMENTS):
            yield index


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_no_cell_is_left_unchecked(path):
    notebook = nbformat.read(path, as_version=4)
    assert list(unchecked_cells(notebook)) == [], f"{path.name}: cells whose output nbval skips"


def test_unchecked_cells_are_found():
    tagged = nbformat.v4.new_code_cell("print(1)", metadata={"tags": ["nbval-ignore-output"]})
    commented = nbformat.v4.new_code_cell("# NBVAL_SKIP\nprint(2)")
    checked = nbformat.v4.new_code_cell("print(3)", metadata={"tags": ["raises-exception"]})
    notebook = nbformat.v4.new_notebook(cells=[tagged, checked, commented])
    assert list(unchecked_cells(notebook)) == [0, 2]


PRINTED_COLUMNS = 79  # what a code block shows at 1280 px without a scroll bar


def overlong_printed_lines(notebook):
    """(cell, length) of each printed line wider than PRINTED_COLUMNS: the site test would
    find it too, after the whole build; this finds it in a second. Tracebacks are exempt."""
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            for line in "".join(text).splitlines():
                if len(line) > PRINTED_COLUMNS:
                    yield index, len(line)


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_printed_lines_fit_the_code_column(path):
    notebook = nbformat.read(path, as_version=4)
    assert list(overlong_printed_lines(notebook)) == [], (
        f"{path.name}: (cell, characters) of printed lines over {PRINTED_COLUMNS} characters;"
        " wrap them (textwrap.fill) or print fewer items per line"
    )


# A directive opened by a backtick fence whose title holds a backtick is not a directive:
# CommonMark ends the info string there, and the page shows the raw ```{admonition} line.
BROKEN_DIRECTIVE = re.compile(r"^\s*`{3,}\{[\w-]+\}[^\n]*`[^\n]*", re.MULTILINE)


def unrendered_directives(notebook):
    """(cell, line) of each directive fence the site would print as text."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            for match in BROKEN_DIRECTIVE.finditer(cell.source):
                yield index, match.group().strip()


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_directive_titles_hold_no_backtick(path):
    notebook = nbformat.read(path, as_version=4)
    assert list(unrendered_directives(notebook)) == [], (
        f"{path.name}: a title with `code` in a ``` fence renders as raw text; "
        "write the title without backticks"
    )


def test_unrendered_directives_are_found():
    cells = [
        nbformat.v4.new_markdown_cell("```{admonition} In depth: plain words\n:class: dropdown"),
        nbformat.v4.new_markdown_cell("Text.\n```{admonition} Why `b` is orange\n```"),
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    assert list(unrendered_directives(notebook)) == [(1, "```{admonition} Why `b` is orange")]


def test_overlong_printed_lines_are_found():
    fits = nbformat.v4.new_code_cell(
        "", outputs=[nbformat.v4.new_output("stream", name="stdout", text="x" * 79 + "\n")]
    )
    too_wide = nbformat.v4.new_code_cell(
        "", outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": "y" * 80})]
    )
    notebook = nbformat.v4.new_notebook(cells=[fits, too_wide])
    assert list(overlong_printed_lines(notebook)) == [(1, 80)]


def release(version):
    """The release part of a version: a local label (`+cpu`, `+cu126`) names a build, not a torch."""
    return version.split("+", 1)[0]


@pytest.mark.parametrize(
    ("recorded", "installed", "same"),
    [
        ("2.13.0+cpu", "2.13.0", True),  # the CUDA wheel from PyPI, or macOS's
        ("2.13.0+cpu", "2.13.0+cu126", True),
        ("2.13.0+cpu", "2.13.1", False),
        ("2.13.0", "2.14.0+cpu", False),
    ],
)
def test_release_ignores_the_build_label(recorded, installed, same):
    assert (release(recorded) == release(installed)) is same


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_outputs_were_produced_with_the_installed_torch(path):
    """The page states the build that produced it; any build of the same release must pass.

    After a torch upgrade, re-run the chapter to restate it.
    """
    provenance = nbformat.read(path, as_version=4).metadata.get("provenance", {})
    installed = importlib.metadata.version("torch")
    assert release(provenance.get("torch", "")) == release(installed), (
        f"{path.name}: outputs recorded with torch {provenance.get('torch')}, installed is "
        f"{installed}; re-run it with `make outputs NB=book/{path.name}`"
    )
    datetime.date.fromisoformat(provenance["date"])


# Cell tags with which Jupyter Book leaves a cell's code off the page (or folds it away).
NOT_SHOWN = {"remove-cell", "remove-input", "hide-cell", "hide-input"}
# Lines that set up the notebook rather than teach: IPython magics and shell escapes, installs,
# plotting defaults.
SET_UP = re.compile(r"^\s*[%!]|\bsubprocess\b|\bimportlib\b|\bpip\b|rcParams|figure_format", re.MULTILINE)


def is_import(line):
    return not line.strip() or line.lstrip().startswith(("#", "import ", "from ", ")")) or line.startswith("    ")


def first_shown_code(notebook):
    for cell in notebook.cells:
        if cell.cell_type == "code" and not NOT_SHOWN & set(cell.metadata.get("tags", [])):
            return cell.source
    return ""


@pytest.mark.parametrize("path", sorted(book_notebooks()), ids=lambda p: p.name)
def test_a_chapters_first_shown_code_is_about_its_subject(path):
    """Set-up (installs, magics, plotting defaults, imports) is folded or left off the page, so
    the first code a reader sees teaches (issue 23)."""
    source = first_shown_code(nbformat.read(path, as_version=4))
    assert source, f"{path.name} shows no code at all"
    assert not SET_UP.search(source), f"{path.name}: set-up in the first code shown:\n{source[:300]}"
    assert not all(map(is_import, source.splitlines())), f"{path.name}: the first code shown only imports"


def test_the_set_up_check_catches_set_up():
    shown = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import os", metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_code_cell("%xmode Minimal\nimport torch\nfrom gradbook import (\n    draw_graph,\n)"),
    ])
    source = first_shown_code(shown)
    assert source.startswith("%xmode") and SET_UP.search(source)
    assert all(map(is_import, source.splitlines()[1:]))
    assert not all(map(is_import, "import torch\nx = torch.ones(3)".splitlines()))
