"""Run the chapters against another Python environment, as Colab would, and report how they
fare there next to the outputs stored in the notebooks.

usage: .venv/bin/python tools/run_elsewhere.py --python /path/to/other/env/bin/python
           [--gradbook-source PATH_OR_URL] [--markdown FILE] [--strict] [book/x.ipynb ...]

Every chapter of _toc.yml by default. Each is copied alone into an empty temporary folder
(Colab has no book/ folder, so no gradbook beside the notebook) and run top to bottom in a
kernel started by the other Python. Its first cell (tools/first_cell.py) then installs gradbook
with that Python's pip from GRADBOOK_SOURCE, which is --gradbook-source when given and the
GitHub repository otherwise. It installs into the other environment, where the next chapters
find it. A source folder gets setuptools' build files written into it: a wheel avoids that.

One row per chapter, then the details:
  unexpected failures  cells that raised without the `raises-exception` tag
  missed failures      cells tagged `raises-exception` that raised nothing
  differing outputs    cells whose outputs nbval would reject, after tests/sanitize.cfg's
                       rewrites (the first cell, the install cell, is not compared)
  new stderr           lines of stderr the stored chapter does not have (warnings, mostly)
Cells count from 0 over all cells, markdown included, as in the notebook's JSON.

It is a report, not a gate: the exit status is 0 once it ran, or with --strict 1 if a cell
failed unexpectedly (or a chapter stopped early). Bad arguments exit with 2. Only the standard library, nbformat and
nbclient run in this process; the other environment needs ipykernel.
"""
import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

ROOT = Path(__file__).resolve().parent.parent
SANITIZE_FILE = ROOT / "tests" / "sanitize.cfg"
RAISES = "raises-exception"
CELL_TIMEOUT = 300  # seconds; nbval allows 90 on the book's machine, other ones may be slower
CHAPTER_TIMEOUT = 1200  # seconds for a whole chapter, the install cell included
# What nbval leaves out when it compares outputs (nbval/plugin.py, without --nbdime): PNG and
# JPEG bytes differ between machines, and the rest is bookkeeping.
NOT_COMPARED = {
    "metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
    "image/png", "image/jpeg", "application/vnd.jupyter.widget-view+json",
}
WIDTH = 100  # characters kept of an error's or a warning's first line


# The chapters and the rewrites ------------------------------------------------------------

def toc_chapters(root=ROOT):
    """The notebooks _toc.yml lists, in reading order. Read with a pattern, not a YAML parser,
    so that the tool needs nothing beyond nbformat and nbclient; tests/test_run_elsewhere.py
    checks the result against tests/book_files.py's reading."""
    toc = (root / "_toc.yml").read_text()
    pages = re.findall(r"^\s*(?:-\s+)?(?:root|file):\s*(\S+)\s*$", toc, flags=re.MULTILINE)
    notebooks = [root / f"{page.strip(chr(34) + chr(39))}.ipynb" for page in pages]
    return [path for path in notebooks if path.exists()]


def load_sanitizers(path=SANITIZE_FILE):
    """The (pattern, replacement) pairs of an nbval sanitize file, parsed as nbval parses it:
    a `regex:` line directly followed by a `replace:` line; section names and comments aside."""
    pairs = re.findall(r"^regex: (.*)$\n^replace: (.*)$", Path(path).read_text(), flags=re.MULTILINE)
    return [(re.compile(regex), replace) for regex, replace in pairs]


def sanitize(value, sanitizers):
    if not isinstance(value, str):
        return value  # JSON data, say: nbval compares it as it is
    for pattern, replacement in sanitizers:
        value = pattern.sub(replacement, value)
    return value


# The comparison --------------------------------------------------------------------------

@dataclasses.dataclass
class Comparison:
    unexpected_failures: list = dataclasses.field(default_factory=list)  # (cell, error's first line)
    missed_failures: list = dataclasses.field(default_factory=list)  # cells
    differing_outputs: list = dataclasses.field(default_factory=list)  # cells
    new_stderr: list = dataclasses.field(default_factory=list)  # (cell, first new line, new lines)


def first_line(text):
    lines = text.strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def joined_streams(outputs):
    """Each stream's whole text, as nbval joins it: the kernel may flush one print in pieces,
    and a carriage return or a backspace rewrites what came before it."""
    streams = defaultdict(str)
    for output in outputs:
        if output.output_type == "stream":
            streams[output.name] += output.text
    for name, text in streams.items():
        previous = None
        while previous != text:
            previous, text = text, re.sub(r"[^\n]\x08", "", text)
        streams[name] = re.sub(r"^.*\r(?=[^\n])", "", text, flags=re.MULTILINE)
    return dict(streams)


def comparable(outputs, sanitizers):
    """What nbval compares of a cell's outputs: for each kind (a stream's name, a MIME type, an
    error's name and message), the sanitized values in order. Kinds compare in any order."""
    kinds = defaultdict(list)
    for name, text in joined_streams(outputs).items():
        kinds[name].append(sanitize(text, sanitizers))
    for output in outputs:
        for key, value in output.items():
            if key == "data":
                for mime, data in value.items():
                    if mime not in NOT_COMPARED:
                        kinds[mime].append(sanitize(data, sanitizers))
            elif key not in NOT_COMPARED and output.output_type != "stream":
                kinds[key].append(sanitize(value, sanitizers))
    return dict(kinds)


def new_stderr_lines(stored_cell, fresh_cell, sanitizers):
    """The lines of stderr the fresh run printed that the stored outputs do not have."""
    def lines(cell):
        text = joined_streams(cell.get("outputs", [])).get("stderr", "")
        return [line for line in sanitize(text, sanitizers).splitlines() if line.strip()]

    known = set(lines(stored_cell))
    return [line for line in lines(fresh_cell) if line not in known]


def without_location(line):
    """A warning's line without the file and line number in front, which would fill the
    width kept: 'FutureWarning: ...' rather than '/long/path/torch/jit/_script.py:1491: ...'."""
    return re.sub(r"^\S*:\d+: (?=\w*Warning\b)", "", line)


def was_run(cell):
    # run_chapter clears every output before the run, so a cell the run never reached (it
    # stopped early) has neither a count nor outputs.
    return cell.execution_count is not None or bool(cell.outputs)


def compare(stored, fresh, sanitizers=()):
    """Compare the cells of a fresh run with the stored ones; cells not run are left out."""
    result = Comparison()
    code = [index for index, cell in enumerate(stored.cells) if cell.cell_type == "code"]
    for index in code:
        before, after = stored.cells[index], fresh.cells[index]
        if not was_run(after):
            continue
        tagged = RAISES in before.metadata.get("tags", [])
        errors = [output for output in after.outputs if output.output_type == "error"]
        if errors and not tagged:
            error = errors[0]
            result.unexpected_failures.append((index, first_line(f"{error.ename}: {error.evalue}")))
        if tagged and not errors:
            result.missed_failures.append(index)
        # The install cell prints pip's output where gradbook is missing, and nothing where the
        # book's environment is complete (as stored): it differs by design.
        if index != code[0] and (comparable(before.outputs, sanitizers)
                                 != comparable(after.outputs, sanitizers)):
            result.differing_outputs.append(index)
        new = new_stderr_lines(before, after, sanitizers)
        if new:
            result.new_stderr.append((index, first_line(without_location(new[0])), len(new)))
    return result


# Running a chapter in the other environment ----------------------------------------------

class OtherPythonKernels(KernelSpecManager):
    """Knows one kernel: ipykernel, started by the other environment's Python. No kernelspec
    file is written or looked up, so nothing installed anywhere can take its place."""

    def __init__(self, python, **kwargs):
        super().__init__(**kwargs)
        self.python = python

    def get_kernel_spec(self, kernel_name):
        return self.kernel_spec_class(
            argv=[self.python, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                  # no history file written into the user's ~/.ipython
                  "--HistoryManager.hist_file=:memory:"],
            display_name=f"Python ({self.python})",
            language="python",
        )


def ask(python, code):
    """What `python -c code` prints, stripped; None if it fails. Run from a neutral folder, so
    that nothing in the current one (book/, say) is importable by accident."""
    result = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120,
                            cwd=tempfile.gettempdir(), check=False)
    return result.stdout.strip() if result.returncode == 0 else None


def has_module(python, name):
    return ask(python, f"import importlib.util; print(importlib.util.find_spec({name!r}) is not None)") == "True"


def package_version(python, name):
    code = f"import importlib.metadata as m\ntry: print(m.version({name!r}))\nexcept m.PackageNotFoundError: print('not installed')"
    return ask(python, code) or "unknown"


@dataclasses.dataclass
class ChapterReport:
    chapter: str  # the notebook's name without .ipynb
    torch: str  # the other environment's torch, read after the run (the first cell may install it)
    code_cells: int
    cells_run: int
    seconds: float
    comparison: Comparison
    stopped: str = ""  # why the run ended before the last cell, if it did


def give_up(cell, name, message):
    """Record a cell the run gave up on as an error output, so that compare() counts it."""
    cell.outputs.append(nbformat.v4.new_output("error", ename=name, evalue=message, traceback=[]))


def execute(notebook, python, folder, gradbook_source, cell_timeout, chapter_timeout):
    """Run the notebook's code cells in order in a kernel of `python` started in `folder`;
    return how many ran and, if the run stopped early, why."""
    deadline = time.monotonic() + chapter_timeout

    def timeout(cell):  # a cell may take cell_timeout, but not past the chapter's deadline
        return max(1, min(cell_timeout, int(deadline - time.monotonic())))

    kernel = AsyncKernelManager(kernel_name="other-python", kernel_spec_manager=OtherPythonKernels(python))
    client = NotebookClient(notebook, km=kernel, allow_errors=True, record_timing=False,
                            timeout_func=timeout, startup_timeout=120)
    env = dict(os.environ)
    if gradbook_source:
        env["GRADBOOK_SOURCE"] = gradbook_source
    cells_run = 0
    try:
        # cleanup_kc: nbclient shuts down only the kernels it made itself, and this one it did not.
        with client.setup_kernel(cwd=folder, env=env, cleanup_kc=True):
            for index, cell in enumerate(notebook.cells):
                if cell.cell_type != "code":
                    continue
                if time.monotonic() >= deadline:
                    return cells_run, f"the chapter's {chapter_timeout} s ran out before cell {index}"
                cells_run += 1
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    limit = "the chapter's" if time.monotonic() >= deadline else "the cell's"
                    give_up(cell, "Timeout", f"{limit} time limit ran out in this cell")
                    return cells_run, f"cell {index} timed out"
                except DeadKernelError:
                    give_up(cell, "DeadKernel", "the kernel died in this cell")
                    return cells_run, f"the kernel died in cell {index}"
    except (RuntimeError, TimeoutError) as error:  # the kernel did not start, or not in time
        return cells_run, f"the kernel failed: {first_line(str(error)) or type(error).__name__}"
    return cells_run, ""


def run_chapter(notebook_path, python, gradbook_source=None, sanitizers=None,
                cell_timeout=CELL_TIMEOUT, chapter_timeout=CHAPTER_TIMEOUT):
    """Run one chapter alone in an empty folder with `python`'s kernel; compare with the file."""
    notebook_path = Path(notebook_path)
    sanitizers = load_sanitizers() if sanitizers is None else sanitizers
    stored = nbformat.read(notebook_path, as_version=4)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="run-elsewhere-") as folder:
        alone = Path(folder) / notebook_path.name
        shutil.copy(notebook_path, alone)
        fresh = nbformat.read(alone, as_version=4)
        # As a reader opens it after "clear all outputs"; and a cell the run does not reach
        # keeps no stored output that would pass for a fresh one.
        for cell in fresh.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        cells_run, stopped = execute(fresh, python, folder, gradbook_source, cell_timeout, chapter_timeout)
    return ChapterReport(
        chapter=notebook_path.stem,
        torch=package_version(python, "torch"),
        code_cells=sum(cell.cell_type == "code" for cell in stored.cells),
        cells_run=cells_run,
        seconds=time.monotonic() - started,
        comparison=compare(stored, fresh, sanitizers),
        stopped=stopped,
    )


# The report ------------------------------------------------------------------------------

HEADER = ["chapter", "torch", "cells run", "unexpected failures", "missed failures",
          "differing outputs", "new stderr lines", "seconds"]


def cells(indices, shown=8):
    """'0', or the count and the cells: '2 (5, 9)'."""
    if not indices:
        return "0"
    listed = ", ".join(map(str, indices[:shown])) + (", …" if len(indices) > shown else "")
    return f"{len(indices)} ({listed})"


def row(report):
    found = report.comparison
    return [
        report.chapter,
        report.torch,
        f"{report.cells_run}/{report.code_cells}" + (" stopped" if report.stopped else ""),
        cells([index for index, _ in found.unexpected_failures]),
        cells(found.missed_failures),
        cells(found.differing_outputs),
        str(sum(count for _, _, count in found.new_stderr)),
        f"{report.seconds:.0f}",
    ]


def details(report):
    """One line per thing worth a look, cell by cell."""
    found = report.comparison
    lines = [f"cell {index}: unexpected failure: {error}" for index, error in found.unexpected_failures]
    lines += [f"cell {index}: tagged {RAISES} but raised nothing" for index in found.missed_failures]
    for index, line, count in found.new_stderr:
        more = f" (+{count - 1} more lines)" if count > 1 else ""
        lines.append(f"cell {index}: new stderr: {line}{more}")
    if report.stopped:
        lines.append(f"stopped early: {report.stopped}")
    return lines


def text_report(reports):
    rows = [HEADER, *map(row, reports)]
    widths = [max(len(line[column]) for line in rows) for column in range(len(HEADER))]
    out = ["  ".join(value.ljust(width) for value, width in zip(line, widths)).rstrip() for line in rows]
    for report in reports:
        if details(report):
            out += ["", f"{report.chapter}:", *(f"  {line}" for line in details(report))]
    return "\n".join(out)


def code_span(text):
    # Markdown: a span holding a backtick needs a longer fence; one space inside each side
    # of the fence is dropped when shown.
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}"


def markdown_report(reports, python):
    out = [f"## The chapters run with `{python}`", "",
           "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(value.replace("|", "\\|") for value in row(report)) + " |"
            for report in reports]
    for report in reports:
        if details(report):
            out += ["", f"### {report.chapter}", ""]
            out += [f"- {code_span(line)}" for line in details(report)]
    return "\n".join(out) + "\n"


# The command line ------------------------------------------------------------------------

def chapter_paths(parser, arguments):
    chapters = toc_chapters()
    if not arguments:
        return chapters
    paths = [Path(argument) for argument in arguments]
    for argument, path in zip(arguments, paths):
        if path.resolve() not in chapters:
            parser.error(f"{argument} is not a chapter (a notebook that _toc.yml lists, such as "
                         f"{chapters[0].relative_to(ROOT)})")
    return [path.resolve() for path in paths]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="the other environment's Python")
    parser.add_argument("--gradbook-source", help="what the first cell installs gradbook from: "
                        "a wheel, a folder with pyproject.toml, or a pip requirement")
    parser.add_argument("--markdown", type=Path, help="also write the report here as Markdown")
    parser.add_argument("--strict", action="store_true",
                        help="exit with 1 if a cell failed unexpectedly or a chapter stopped early")
    parser.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT, help="seconds per cell")
    parser.add_argument("--chapter-timeout", type=int, default=CHAPTER_TIMEOUT, help="seconds per chapter")
    parser.add_argument("notebooks", nargs="*", help="chapters to run (default: all of _toc.yml)")
    options = parser.parse_args(argv)

    # Not resolved: a venv's python is a symbolic link, and following it leaves the venv.
    python = shutil.which(options.python)
    if python is None:
        parser.error(f"--python {options.python}: no executable Python there")
    python = str(Path(python).absolute())
    chapters = chapter_paths(parser, options.notebooks)
    source = options.gradbook_source
    if source and Path(source).exists():
        source = str(Path(source).absolute())  # the kernel runs in a temporary folder
    if not has_module(python, "ipykernel"):
        print(f"run_elsewhere: {python} cannot run a Jupyter kernel: it has no ipykernel.\n"
              f"  fix: {python} -m pip install ipykernel", file=sys.stderr)
        return 2
    if has_module(python, "gradbook"):
        print("run_elsewhere: note: gradbook is already installed there, so the first cells "
              "use that one and install nothing", file=sys.stderr)

    sanitizers = load_sanitizers()
    reports = []
    for path in chapters:
        print(f"running {path.relative_to(ROOT)} ...", file=sys.stderr, flush=True)
        reports.append(run_chapter(path, python, source, sanitizers,
                                   options.cell_timeout, options.chapter_timeout))
    print(text_report(reports))
    if options.markdown:
        # Overwritten: on GitHub Actions each step has a summary file of its own.
        options.markdown.write_text(markdown_report(reports, python))
    # A chapter that stopped early (its kernel never started, say) failed too.
    failed = any(report.comparison.unexpected_failures or report.stopped for report in reports)
    return 1 if options.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
