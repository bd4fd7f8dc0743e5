"""Print under each chapter's title how long it takes to read, from what the page shows.

The model (issue 23, fitted to a learner's own estimates): prose at 180 words a minute, code
at 15 lines a minute, printed output at 60 lines a minute. Only what the page shows unfolded
counts: not the solutions of exercises, not the code of cells whose input is folded or left
out (tags hide-input, hide-cell, remove-input, remove-cell), not outputs folded or left out,
not drawings. Blank lines do not count.
"""
import json
import re
from pathlib import Path

from docutils import nodes

PER_MINUTE = {"words": 180, "code": 15, "output": 60}
INPUT_NOT_SHOWN = {"hide-input", "hide-cell", "remove-input", "remove-cell"}
OUTPUT_NOT_SHOWN = {"hide-output", "hide-cell", "remove-output", "remove-cell"}
WORD = re.compile(r"[\w`'’-]+")
DIRECTIVE_LINE = re.compile(r"^\s*(```|:::|:class:|:label:)")


def joined(value):
    return "".join(value) if isinstance(value, list) else value


def shown_lines(text):
    return sum(1 for line in text.splitlines() if line.strip())


def output_lines(output):
    """Lines of text an output shows; a drawing (SVG, PNG, inline <svg>) counts none."""
    kind = output.get("output_type")
    if kind == "stream":
        return shown_lines(joined(output.get("text", "")))
    if kind == "error":
        return 1
    data = output.get("data", {})
    if "image/svg+xml" in data or "image/png" in data or "<svg" in joined(data.get("text/html", "")):
        return 0
    return shown_lines(joined(data.get("text/plain", "")))


def counts(cells):
    """{"words": prose words, "code": code lines, "output": output lines} the page shows."""
    total = {"words": 0, "code": 0, "output": 0}
    in_solution = False
    for cell in cells:
        source = joined(cell.get("source", ""))
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] == "markdown":
            prose = []
            for line in source.splitlines():  # a solution may end mid-cell
                if "{solution-start}" in line or "{solution-end}" in line:
                    in_solution = "{solution-start}" in line
                elif not in_solution and not DIRECTIVE_LINE.match(line):
                    prose.append(line)
            total["words"] += len(WORD.findall("\n".join(prose)))
        elif cell["cell_type"] == "code" and not in_solution:
            if not tags & INPUT_NOT_SHOWN:
                total["code"] += shown_lines(source)
            if not tags & OUTPUT_NOT_SHOWN:
                total["output"] += sum(map(output_lines, cell.get("outputs", [])))
    return total


def minutes(cells):
    return sum(count / PER_MINUTE[kind] for kind, count in counts(cells).items())


def add_reading_time(app, doctree):
    source = Path(app.env.doc2path(app.env.docname))
    if source.suffix != ".ipynb":
        return
    cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
    note = nodes.paragraph(
        text=f"About {max(1, round(minutes(cells)))} minutes to read.", classes=["reading-time"]
    )
    title_section = next(iter(doctree.findall(nodes.section)))
    title_section.insert(1, note)


def setup(app):
    app.connect("doctree-read", add_reading_time)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
