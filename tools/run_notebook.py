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
