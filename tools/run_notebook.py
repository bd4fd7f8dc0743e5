"""Re-execute chapters in place, so that their stored outputs are the ones nbval will expect.

usage: python tools/run_notebook.py book/double_backward.ipynb [more.ipynb ...]

Each notebook runs top to bottom in a fresh kernel, from its own folder, as nbval runs it.
Cells tagged ``raises-exception`` may raise; an error anywhere else stops with the cell shown.

Measured figures (times, speed ratios, profiler peaks: what ``gradbook`` prints with a ``~``)
are stored only from a quiet machine. While the chapter runs, the tool counts the CPU time that
other processes take (all of /proc/stat's busy time, less this process and the kernel it ran);
if that exceeds a tenth of a core on average and the chapter printed a measured figure, it
refuses to store the outputs and says why. A load average would miss a short burst and lag
behind a finished one; the CPU time of others is what competes with the measurement.
"""
import configparser
import datetime
import importlib.metadata
import os
import re
import sys
import time
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


SANITIZE_FILE = Path(__file__).resolve().parent.parent / "tests" / "sanitize.cfg"


def measured_patterns(path=SANITIZE_FILE):
    """What gradbook marks as measured: the patterns of the sanitize file's "measured" sections,
    which nbval rewrites before comparing (one definition for both)."""
    config = configparser.RawConfigParser()
    config.read(path)
    return [re.compile(config[section]["regex"]) for section in config.sections()
            if section.startswith("measured")]


# Other processes may use at most this many cores on average while measured figures are taken.
QUIET_CORES = 0.1


class BusyMachineError(RuntimeError):
    pass


def busy_cpu_seconds():
    """Seconds of CPU time all processes have used since boot (every core), from /proc/stat."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds():
    """CPU time of this process and of the children it has waited for (the kernel, once shut down)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def cores_used_by_others(run):
    """Call run(); return the average number of cores other processes kept busy meanwhile
    (None where /proc/stat does not exist, as on macOS)."""
    if not Path("/proc/stat").exists():
        run()
        return None
    busy, own, started = busy_cpu_seconds(), own_cpu_seconds(), time.monotonic()
    run()
    others = (busy_cpu_seconds() - busy) - (own_cpu_seconds() - own)
    return max(others, 0.0) / (time.monotonic() - started)


def measured_figures(notebook, patterns=None):
    patterns = measured_patterns() if patterns is None else patterns
    return [
        match.group(0)
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        for text in [output.get("text", "")] + list(output.get("data", {}).values())
        if isinstance(text, str)
        for pattern in patterns
        for match in pattern.finditer(text)
    ]


def run(path):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        record_timing=False,  # timestamps would change the file on every run
        resources={"metadata": {"path": str(path.parent)}},
    )
    others = cores_used_by_others(client.execute)
    figures = measured_figures(notebook)
    if figures and others is not None and others > QUIET_CORES:
        raise BusyMachineError(
            f"{path}: not stored. Other processes kept {others:.2f} cores busy on average while it "
            f"ran (at most {QUIET_CORES} allowed), and it prints {len(figures)} measured figures "
            f"({', '.join(figures[:3])}, ...). Stop what else is running and try again."
        )
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
        try:
            run(path)
        except BusyMachineError as error:
            sys.exit(f"run_notebook: {error}")
        print(f"  stored fresh outputs in {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
