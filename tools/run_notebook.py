"""Re-execute chapters in place, so that their stored outputs are the ones nbval will expect.

usage: python tools/run_notebook.py book/double_backward.ipynb [more.ipynb ...]

Each notebook runs top to bottom in a fresh kernel, from its own folder, as nbval runs it.
Cells tagged ``raises-exception`` may raise; an error anywhere else stops with the cell shown.
"""
import datetime
import importlib.metadata
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def join_streams(notebook):
    """Join each run of consecutive stream outputs of the same name into one, text unchanged.

    The kernel flushes printed text on a timer, so one line can be stored in two pieces; the
    site's renderer ends every piece with a line break, which would cut the line in two.
    """
    for cell in notebook.cells:
        joined = []
        for output in cell.get("outputs", []):
            previous = joined[-1] if joined else None
            if (
                output.output_type == "stream"
                and previous is not None
                and previous.output_type == "stream"
                and previous.name == output.name
            ):
                previous.text += output.text
            else:
                joined.append(output)
        if "outputs" in cell:
            cell.outputs = joined


def run(path):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        record_timing=False,  # timestamps would change the file on every run
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    join_streams(notebook)
    # What the outputs were produced with; the site prints it at the top of the chapter.
    notebook.metadata["provenance"] = {
        "torch": importlib.metadata.version("torch"),
        "date": datetime.date.today().isoformat(),
    }
    nbformat.write(notebook, path)


def main(arguments):
    if not arguments:
        sys.exit(__doc__)
    for argument in arguments:
        path = Path(argument)
        if path.suffix != ".ipynb" or not path.is_file():
            sys.exit(f"run_notebook: {argument} is not a notebook file (expected book/<name>.ipynb).")
        print(f"executing {path} ...", flush=True)
        run(path)
        print(f"  stored fresh outputs in {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
