"""Print at the top of each chapter which torch version and which day produced its outputs.

tools/run_notebook.py records both in the notebook's metadata when it stores the outputs;
tests/test_notebooks.py checks that the recorded torch is the one installed.
"""
import json
from pathlib import Path

from docutils import nodes


def add_provenance(app, doctree):
    source = Path(app.env.doc2path(app.env.docname))
    if source.suffix != ".ipynb":
        return
    provenance = json.loads(source.read_text(encoding="utf-8"))["metadata"].get("provenance")
    if not provenance:
        raise ValueError(f"{source}: no provenance metadata; store its outputs with tools/run_notebook.py")
    note = nodes.paragraph(
        text=f"Outputs produced with torch {provenance['torch']} on {provenance['date']}, "
        "and re-checked cell by cell by the test suite.",
        classes=["provenance"],
    )
    title_section = next(iter(doctree.findall(nodes.section)))
    title_section.insert(1, note)


def setup(app):
    app.connect("doctree-read", add_provenance)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
