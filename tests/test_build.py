"""The site builds from a clean _build with warnings as errors, showing the stored outputs."""
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from conftest import ROOT
from test_notebooks import book_notebooks

HTML = ROOT / "_build" / "html"


def graph_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    return sum(
        '<svg role="img"' in output.get("data", {}).get("text/html", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


def test_site_builds_with_warnings_as_errors():
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run(
        [str(jupyter_book), "build", str(ROOT), "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "warning" not in result.stderr.lower(), result.stderr[-4000:]

    for notebook in book_notebooks():
        relative = notebook.relative_to(ROOT)
        html = (HTML / relative.with_suffix(".html")).read_text()
        # Each graph stored in the notebook is on its page, inline, as stored (not re-executed).
        assert html.count('<svg role="img" aria-label=') == graph_outputs(notebook), relative
        assert f"main?urlpath=lab/tree/{relative.as_posix()}" in html, "Binder link missing"
        provenance = nbformat.read(notebook, as_version=4).metadata["provenance"]
        assert f"produced with torch {provenance['torch']} on {provenance['date']}" in html
