"""tools/run_notebook.py stores each cell's printed text in one piece."""
import importlib.util
from pathlib import Path

import nbformat
import pytest

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


SPIN = "import time\nend = time.monotonic() + 20\nwhile time.monotonic() < end: pass"


def test_measured_figures_are_found_as_the_sanitize_file_finds_them():
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [stream("stdout", "fused: ~12.3 ms (IQR ~11 ms to ~14 ms); ~1.84x\npeak ~20.20 MiB\n"),
                    stream("stdout", "~no measurable difference; 12 ms unmarked\n")]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    # The numbers tests/sanitize.cfg rewrites (its patterns stop before the unit), output by
    # output; the unmarked "12 ms" is not one of them.
    assert run_notebook.measured_figures(notebook) == [
        "~12.3", "~11", "~14", "~1.84", "~20.20", "~no measurable difference"]


def test_a_process_that_competes_for_the_cpu_is_counted():
    import subprocess
    import sys
    import time

    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(0.2)  # the spinner is running
        others = run_notebook.cores_used_by_others(lambda: time.sleep(1))
    finally:
        spinner.kill()
        spinner.wait()
    assert others > 0.3, f"a spinning process counted as {others:.2f} cores"


def test_measured_outputs_from_a_busy_machine_are_not_stored(tmp_path):
    import subprocess
    import sys

    cell = nbformat.v4.new_code_cell("import time\ntime.sleep(1)\nprint('took ~12 ms')")
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    before = path.read_text()
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        with pytest.raises(run_notebook.BusyMachineError, match="not stored.*measured figures"):
            run_notebook.run(path)
    finally:
        spinner.kill()
        spinner.wait()
    assert path.read_text() == before
