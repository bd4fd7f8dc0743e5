"""The engine module is exactly the export of chapter 1's `#@save` cells: one source of truth."""
import importlib.util
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT

SCRIPT = ROOT / "tools" / "export_saved_cells.py"


def load_exporter():
    spec = importlib.util.spec_from_file_location("export_saved_cells", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


exporter = load_exporter()


def test_the_module_is_the_export_of_the_chapter():
    problem = exporter.drift()
    assert problem == "", problem


def test_the_check_command_passes_now():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_module_edited_by_hand_is_reported(tmp_path):
    module = tmp_path / "simple_grad.py"
    module.write_text(exporter.module_text(exporter.CHAPTER).replace("v{", "w{"))
    problem = exporter.drift(exporter.CHAPTER, module)
    assert "is not the export" in problem and "python tools/export_saved_cells.py" in problem


def test_a_chapter_edited_without_exporting_is_reported(tmp_path):
    notebook = nbformat.read(exporter.CHAPTER, as_version=4)
    saved = [cell for cell in notebook.cells if cell.source.startswith("# @save")]
    saved[-1].source += "\n\nEXTRA = 1"
    chapter = tmp_path / "chapter.ipynb"
    nbformat.write(notebook, chapter)
    assert "+EXTRA = 1" in exporter.drift(chapter, exporter.MODULE)


def test_only_marked_cells_are_exported_without_their_marker(tmp_path):
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("#@save\nKEPT = 1"),
            nbformat.v4.new_code_cell("print('a demonstration, not exported')"),
            nbformat.v4.new_markdown_cell("#@save\nnot code"),
            nbformat.v4.new_code_cell("# @save\nALSO_KEPT = 2"),  # as ruff formats it
        ]
    )
    chapter = tmp_path / "chapter.ipynb"
    nbformat.write(notebook, chapter)
    text = exporter.module_text(chapter)
    assert text.startswith(exporter.HEADER)
    body = text[len(exporter.HEADER):]
    assert body.split() == ["KEPT", "=", "1", "ALSO_KEPT", "=", "2"]


def test_a_chapter_with_nothing_to_export_is_an_error(tmp_path):
    chapter = tmp_path / "chapter.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), chapter)
    with pytest.raises(ValueError, match="nothing to export"):
        exporter.module_text(chapter)
