"""tools/run_notebook.py stores each cell's printed text in one piece."""
import importlib.util
from pathlib import Path

import nbformat

TOOL = Path(__file__).resolve().parent.parent / "tools" / "run_notebook.py"
spec = importlib.util.spec_from_file_location("run_notebook", TOOL)
run_notebook = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_notebook)


def stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_join_streams_joins_consecutive_pieces_of_one_stream_exactly():
    cell = nbformat.v4.new_code_cell("print('gradcheck:', True)")
    cell.outputs = [
        stream("stdout", "gradcheck:"),
        stream("stdout", " True\nnext line\n"),
        stream("stderr", "a warning\n"),
        stream("stdout", "last\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell("text")])
    run_notebook.join_streams(notebook)
    assert [(o.name, o.text) for o in notebook.cells[0].outputs] == [
        ("stdout", "gradcheck: True\nnext line\n"),
        ("stderr", "a warning\n"),
        ("stdout", "last\n"),
    ]
    assert "outputs" not in notebook.cells[1]
