"""The capability matrix as text and HTML, and what each row needs, read off the columns."""
import pytest

from gradbook.capability import (
    capability_html,
    numbered_errors,
    print_capabilities,
    requirements,
    requirements_html,
)

ERROR_A = "RuntimeError: needs setup_context"
ERROR_B = "NotImplementedError: needs jvp"
MATRIX = {  # column -> row -> verdict
    "plain": {"grad": "works", "jvp": ERROR_A, "compile": "works"},
    "split": {"grad": "works", "jvp": ERROR_B, "compile": "works"},
    "+jvp": {"grad": "works", "jvp": "works", "compile": ERROR_B},
    "numpy": {"grad": "WRONG RESULT", "jvp": "works", "compile": ERROR_A},
}
ROWS = ["grad", "jvp", "compile"]


def test_errors_are_numbered_once_in_column_order():
    assert numbered_errors(MATRIX) == [ERROR_A, ERROR_B]


def test_the_text_table_numbers_each_error(capsys):
    print_capabilities(MATRIX, ROWS)
    text = capsys.readouterr().out
    assert "jvp             err 1 err 2 works works" in text
    assert "grad            works works works WRONG" in text
    assert f"1. {ERROR_A}" in text and f"2. {ERROR_B}" in text


def test_the_html_table_colours_each_verdict_and_lists_the_errors():
    page = capability_html(MATRIX, ROWS, notes=["UserWarning: slow"])
    assert page.count("<tr>") == 1 + len(ROWS)
    assert page.count("#c6efce") == 7  # works
    assert page.count("#ffb3b3") == 1  # WRONG
    assert page.count("#ffe699") == 4  # an error
    assert 'title="RuntimeError: needs setup_context">err 1</td>' in page
    assert "<li>NotImplementedError: needs jvp</li>" in page
    assert "<p>UserWarning: slow</p>" in page
    # the box that scrolls on a phone can be scrolled from the keyboard (an audit's rule)
    assert '<div style="overflow-x: auto" tabindex="0" role="region"' in page
    # and the row labels stay in view while the verdicts scroll under them
    assert page.count("position: sticky; left: 0") == 1 + len(ROWS)


def test_the_html_table_can_come_in_blocks_of_columns_each_with_the_row_labels():
    page = capability_html(MATRIX, ROWS, per_block=3)
    assert page.count("<table") == 2  # columns 1-3, then column 4
    assert page.count("<tr>") == 2 * (1 + len(ROWS))
    assert page.count("position: sticky; left: 0") == 2 * (1 + len(ROWS))
    first, second = page.split("</table>")[:2]
    assert ">split</th>" in first and ">numpy</th>" in second
    assert ">numpy</th>" not in first
    # an error keeps its number in every block
    assert 'title="RuntimeError: needs setup_context">err 1</td>' in second
    with pytest.raises(ValueError, match="per_block"):
        capability_html(MATRIX, ROWS, per_block=0)


def test_requirements_are_the_smallest_feature_sets_that_pass():
    features = {"plain": [], "split": ["setup_context"], "+jvp": ["setup_context", "jvp"]}
    needs = requirements(MATRIX, ROWS, features)
    assert needs["grad"] == "nothing more"
    assert needs["jvp"] == "setup_context, jvp"
    assert needs["compile"] == "nothing more; jvp breaks it (err 2)"


def test_a_row_that_no_column_passes_says_so():
    matrix = {"a": {"r": "WRONG RESULT"}, "b": {"r": ERROR_A}}
    needs = requirements(matrix, ["r"], {"a": [], "b": ["x"]})
    assert needs == {"r": "none of these (err 1 at b)"}


def test_a_row_failed_alike_by_every_column_says_so():
    matrix = {"a": {"r": ERROR_A}, "b": {"r": ERROR_A}}
    needs = requirements(matrix, ["r"], {"a": [], "b": ["x"]})
    assert needs == {"r": "none of these (err 1 in every column)"}


def test_two_incomparable_ways_are_joined_with_or():
    matrix = {"a": {"r": ERROR_A}, "b": {"r": "works"}, "c": {"r": "works"}}
    needs = requirements(matrix, ["r"], {"a": [], "b": ["x"], "c": ["y"]})
    assert needs == {"r": "x or y"}


def test_the_requirements_table_has_a_row_each():
    page = requirements_html({"grad": "nothing more", "jvp": "jvp"}, "needs")
    assert page.count("<tr>") == 3 and ">needs</th>" in page


def test_wrong_arguments_are_refused():
    with pytest.raises(TypeError, match="dict from a column label"):
        numbered_errors([["works"]])
    with pytest.raises(ValueError, match="no verdict"):
        print_capabilities(MATRIX, ["grad", "hessian"])
    with pytest.raises(TypeError, match="notes must be a list"):
        capability_html(MATRIX, ROWS, notes="a warning")
    with pytest.raises(ValueError, match="not in the matrix"):
        requirements(MATRIX, ROWS, {"other": []})
    with pytest.raises(TypeError, match="features as a dict"):
        requirements(MATRIX, ROWS, {"plain": "setup_context"})
    with pytest.raises(TypeError, match="heading must be a string"):
        requirements_html({"grad": "x"}, None)


def test_a_grid_colours_each_word():
    from gradbook.capability import grid_html

    grid = {"forward": {"classic": "plain", "func": "plain"},
            "backward": {"classic": "plain", "func": "wrapped"}}
    page = grid_html(grid, {"plain": "#ffffff", "wrapped": "#ffe699"}, corner="method")
    assert page.count("background: #ffe699") == 1 and page.count("background: #ffffff") == 3
    assert 'monospace">backward</th>' in page and ">method</th>" in page
    with pytest.raises(ValueError, match="no colour for 'wrapped'"):
        grid_html(grid, {"plain": "#ffffff"})
    with pytest.raises(ValueError, match="has columns"):
        grid_html({**grid, "jvp": {"classic": "plain"}}, {"plain": "#fff", "wrapped": "#ff0"})
    with pytest.raises(TypeError, match="dict from a row name"):
        grid_html([], {})


NAMES = {"no setup": "setup_context", "no jvp": "needs jvp"}


def test_errors_can_be_named_instead_of_numbered(capsys):
    print_capabilities(MATRIX, ROWS, names=NAMES)
    text = capsys.readouterr().out
    assert "jvp             no setup no jvp   works    works" in text
    assert f"no setup: {ERROR_A}" in text and "err 1" not in text
    page = capability_html(MATRIX, ROWS, names=NAMES)
    assert 'title="RuntimeError: needs setup_context">no setup</td>' in page
    assert "<li><b>no jvp</b>: NotImplementedError: needs jvp</li>" in page
    assert page.count("#ffe699") == 4  # an error keeps its colour
    needs = requirements(MATRIX, ROWS, {"plain": [], "+jvp": ["jvp"]}, names=NAMES)
    assert "err" not in " ".join(needs.values())


def test_errors_sharing_a_name_are_listed_once_under_it():
    page = capability_html(MATRIX, ROWS, names={"no rule": "needs"})
    assert page.count("<li><b>no rule</b>") == 1
    assert f"<li><b>no rule</b>: {ERROR_A} | {ERROR_B}</li>" in page


def test_a_name_must_pick_out_exactly_one_label_per_error():
    with pytest.raises(ValueError, match="matches 0 labels"):
        capability_html(MATRIX, ROWS, names={"no jvp": "needs jvp"})
    with pytest.raises(ValueError, match="matches 2 labels"):
        capability_html(MATRIX, ROWS, names={**NAMES, "needs": "needs"})
    with pytest.raises(TypeError, match="short label"):
        capability_html(MATRIX, ROWS, names={"no jvp": 3})


def test_a_right_result_without_the_functions_backward_is_its_own_verdict(capsys):
    matrix = {"split": {"export": "FORWARD ONLY", "grad": ERROR_A},
              "op": {"export": "works", "grad": "works"}}
    print_capabilities(matrix, ["export", "grad"])
    text = capsys.readouterr().out
    assert "export          bwd dropped works" in text
    assert "bwd dropped: a right result, but the function's own backward" in text
    assert "1. " + ERROR_A in text  # not counted among the errors
    page = capability_html(matrix, ["export", "grad"])
    assert page.count("#cfe2f3") == 1 and "bwd dropped: a right result" in page
    # a cell's label never wraps, but the long one is set on two lines, to keep its
    # column as narrow as the others
    assert ">bwd<br>dropped</td>" in page and "white-space: nowrap; color" in page
    assert numbered_errors(matrix) == [ERROR_A]


def test_the_forward_only_legend_is_printed_only_where_a_cell_has_it(capsys):
    print_capabilities({"a": {"r": "works"}}, ["r"])
    assert "bwd dropped" not in capsys.readouterr().out
    assert "bwd dropped" not in capability_html({"a": {"r": "works"}}, ["r"])
