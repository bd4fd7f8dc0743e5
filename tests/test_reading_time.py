"""_ext/reading_time.py: what a page shows, counted as the reading-time model says."""
import nbformat

import reading_time  # _ext/, on the path by conftest.py


def code(source, tags=(), outputs=()):
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)})
    cell.outputs = list(outputs)
    return cell


def printed(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def test_only_what_the_page_shows_unfolded_counts():
    cells = [
        nbformat.v4.new_markdown_cell("# Title\n\nSix words of prose are here."),
        code("import os", tags=["remove-cell"], outputs=[printed("hidden\n")]),
        code("set_up = 1", tags=["hide-cell"]),
        code("x = 1\n\ny = 2", outputs=[printed("one\ntwo\n\n")]),
        code("folded = 1", tags=["hide-input"], outputs=[printed("shown\n")]),
        code("z = 3", outputs=[nbformat.v4.new_output(
            "display_data", data={"text/html": '<svg role="img"></svg>', "text/plain": "<graph>"})]),
        nbformat.v4.new_markdown_cell("```{solution-start} ex\n```\nSolution words do not count."),
        code("solution = 1", outputs=[printed("no\n")]),
        nbformat.v4.new_markdown_cell("```{solution-end}\n```\nThese three count."),
    ]
    # Title, six and three words (after the solution's end); code: x, y, z; output: one, two,
    # shown (the drawing counts none).
    assert reading_time.counts(cells) == {"words": 10, "code": 3, "output": 3}
    assert reading_time.minutes(cells) == 10 / 180 + 3 / 15 + 3 / 60


def test_an_error_counts_one_line():
    error = nbformat.v4.new_output("error", ename="RuntimeError", evalue="no", traceback=["a", "b"])
    assert reading_time.counts([code("f()", outputs=[error])])["output"] == 1
