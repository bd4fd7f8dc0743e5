"""Show a capability matrix (which transform works on which way of writing a function) as
text and as a coloured HTML table, with the distinct errors numbered once for both, or
named: ``names`` maps a short label (``"no jvp"``) to a piece of text that one error's first
line contains, so a reader need not decode numbers.

A matrix maps a column label (a way of writing the function) to a dict from a row name (a
transform) to a verdict: ``"works"``, ``"WRONG RESULT"`` (a wrong result, and no error),
``"FORWARD ONLY"`` (a right result that the function's own backward took no part in, as when
``torch.export`` keeps a Function's forward and drops its backward), or the error's type and
first line.
"""
import html
import textwrap

WORKS, WRONG, FORWARD_ONLY = "works", "WRONG RESULT", "FORWARD ONLY"
NOT_ERRORS = (WORKS, WRONG, FORWARD_ONLY)
FORWARD_ONLY_SHORT = "bwd dropped"  # what a table cell shows for FORWARD_ONLY
# the legend's line for FORWARD_ONLY, printed only under a matrix that has one
FORWARD_ONLY_LEGEND = (f"{FORWARD_ONLY_SHORT}: a right result, but the function's own backward "
                       "was not run")
# light backgrounds with black text: readable on the light and on the dark theme
COLOURS = {"works": "#c6efce", "WRONG": "#ffb3b3", FORWARD_ONLY_SHORT: "#cfe2f3", "err": "#ffe699"}
# a box that scrolls sideways on a narrow screen; focusable, so a keyboard can scroll it too
_SCROLLS = '<div style="overflow-x: auto" tabindex="0" role="region" aria-label="{label}">'
# The row labels stay in view while the verdicts scroll sideways on a phone, on an opaque
# white that hides the cells passing under them (in dark mode too, where the theme puts HTML
# outputs on a light grey, so black text stays readable).
_LABEL_STYLE = ("text-align: left; padding-right: 0.3em; white-space: nowrap; position: sticky; "
                "left: 0; background: #fff; color: #000")


def numbered_errors(matrix):
    """The distinct errors of ``matrix``, in the order columns and then rows meet them; error N
    is at index N - 1."""
    _check_matrix(matrix)
    return list(dict.fromkeys(
        verdict for column in matrix.values() for verdict in column.values()
        if verdict not in NOT_ERRORS
    ))


def error_labels(matrix, names=None):
    """A dict from each distinct error of ``matrix`` to what its cells show: ``err N`` in the
    order of ``numbered_errors``, or, with ``names`` (a dict from a short label to a piece of
    text), the label whose text the error contains; every error needs exactly one."""
    errors = numbered_errors(matrix)
    if names is None:
        return {error: f"err {number}" for number, error in enumerate(errors, start=1)}
    if not isinstance(names, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in names.items()
    ):
        raise TypeError("names must be a dict from a short label to a piece of an error's "
                        "text, both non-empty strings.")
    labels = {}
    for error in errors:
        found = [label for label, text in names.items() if text in error]
        if len(found) != 1:
            raise ValueError(f"names: the error {error!r} matches {len(found)} labels "
                             f"({found}); it needs exactly one.")
        labels[error] = found[0]
    return labels


def short_verdict(verdict, labels):
    """``works``, ``WRONG``, ``bwd dropped``, or the error's label (``err N`` or a name): what a
    cell of the table shows. ``labels`` is ``error_labels``'s dict."""
    if verdict == WORKS:
        return "works"
    if verdict == WRONG:
        return "WRONG"
    if verdict == FORWARD_ONLY:
        return FORWARD_ONLY_SHORT
    return labels[verdict]


def _has_forward_only(matrix):
    return any(verdict == FORWARD_ONLY for column in matrix.values()
               for verdict in column.values())


def _legend(labels, numbered):
    # the errors under a table, each by its first line: numbered (err N) or named
    if numbered:
        return [(f"{n}. ", error) for n, error in enumerate(labels, start=1)]
    return [(f"{label}: ", error) for error, label in labels.items()]


def print_capabilities(matrix, rows, width=6, per_block=4, names=None):
    """Print the matrix as text: one line per row, ``per_block`` columns at a time (4 fit a
    phone's 39 characters), then each distinct error, numbered or named, by its first line."""
    errors = error_labels(matrix, names)
    _check_rows(matrix, rows)
    # a column at least one wider than the longest label, so that no two cells run together
    forward_only = _has_forward_only(matrix)
    shown = list(errors.values()) + ([FORWARD_ONLY_SHORT] if forward_only else [])
    width = max([width] + [len(label) + 1 for label in shown])
    labels = list(matrix)
    for first in range(0, len(labels), per_block):
        block = labels[first:first + per_block]
        header = "".join(f"{label:{width}}" for label in block)
        print(f"{'':16}{header}".rstrip())
        for name in rows:
            cells = "".join(f"{short_verdict(matrix[label][name], errors):{width}}"
                            for label in block)
            print(f"{name:16}{cells}".rstrip())
        print()
    print("WRONG: a wrong result, and no error")
    if forward_only:
        print(textwrap.fill(FORWARD_ONLY_LEGEND, 79, subsequent_indent="   "))
    print("Errors (the first line of each message):")
    for label, error in _legend(errors, numbered=names is None):
        print(textwrap.fill(error, 79, initial_indent=label, subsequent_indent="   "))


def capability_html(matrix, rows, notes=(), per_block=None, names=None):
    """The matrix as an HTML table, a cell coloured by its verdict (green works, red WRONG,
    yellow err N or the error's name, with its first line as the cell's tooltip), the errors
    below it and then ``notes`` (lines of text, such as the warnings met on the way). With
    ``per_block`` columns at a time, one table per block, each with the row labels (4 columns
    fit a phone's width, as in ``print_capabilities``); each table scrolls sideways inside its
    own box on a screen narrower still."""
    errors = error_labels(matrix, names)
    _check_rows(matrix, rows)
    if isinstance(notes, str) or not all(isinstance(note, str) for note in notes):
        raise TypeError("capability_html: notes must be a list of strings (lines of text).")
    labels = list(matrix)
    if per_block is None:
        per_block = len(labels)
    if not isinstance(per_block, int) or isinstance(per_block, bool) or per_block < 1:
        raise ValueError(f"capability_html: per_block must be a whole number of columns, "
                         f"at least 1, got {per_block!r}.")
    tables = "".join(_verdict_table({label: matrix[label] for label in labels[i:i + per_block]},
                                    rows, errors)
                     for i in range(0, len(labels), per_block))
    extra = "".join(f"<p>{html.escape(note)}</p>" for note in notes)
    if names is None:
        legend = "".join(f"<li>{html.escape(error)}</li>" for error in errors)
        listed = f'<ol style="overflow-wrap: anywhere">{legend}</ol>'
    else:
        legend = "".join(f"<li><b>{html.escape(label)}</b>: {html.escape(' | '.join(texts))}</li>"
                         for label, texts in _errors_by_label(errors).items())
        listed = f'<ul style="overflow-wrap: anywhere">{legend}</ul>'
    forward_only = (f" {html.escape(FORWARD_ONLY_LEGEND)}." if _has_forward_only(matrix)
                    else "")
    return (
        f"{tables}<p>WRONG: a wrong result, and no error.{forward_only} Errors (the first line "
        f"of each message):</p>{listed}{extra}"
    )


def _errors_by_label(errors):
    # one line per label: errors that differ only in a name (which Function lacks a vmap
    # rule, say) share a label, and listing the label twice would read as two meanings
    grouped = {}
    for error, label in errors.items():
        grouped.setdefault(label, []).append(error)
    return grouped


def _verdict_table(matrix, rows, errors):
    # narrow padding and a smaller font: a block of 4 columns fits a phone 390 px wide
    # nowrap: a two-word label ("no setup") stays on one line in a narrow column
    cell_style = "padding: 0.1em 0.25em; text-align: center; white-space: nowrap; color: #000; "
    head = "".join(f'<th scope="col" style="padding: 0.1em 0.25em">{html.escape(label)}</th>'
                   for label in matrix)
    body = []
    for name in rows:
        cells = []
        for label in matrix:
            verdict = matrix[label][name]
            shown = short_verdict(verdict, errors)
            colour = COLOURS[shown if verdict in NOT_ERRORS else "err"]
            title = "" if verdict == WORKS else f' title="{html.escape(verdict, quote=True)}"'
            text = html.escape(shown)
            if verdict == FORWARD_ONLY:  # on two lines: the column stays as narrow as the rest
                text = text.replace(" ", "<br>", 1)
            cells.append(f'<td style="{cell_style}background: {colour}"{title}>{text}</td>')
        body.append(f'<tr><th scope="row" style="{_LABEL_STYLE}">'
                    f'{html.escape(name)}</th>{"".join(cells)}</tr>')
    return (
        f'{_SCROLLS.format(label="capability matrix")}'
        '<table style="border-collapse: separate; border-spacing: 1px; font-size: 0.8em; '
        'margin-bottom: 0.5em">'
        f'<thead><tr><th style="{_LABEL_STYLE}"></th>{head}</tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table></div>'
    )


def _check_matrix(matrix):
    if not isinstance(matrix, dict) or not matrix or not all(
        isinstance(column, dict) for column in matrix.values()
    ):
        raise TypeError("pass the matrix as a dict from a column label to a dict from a row "
                        "name to a verdict.")
    for label, column in matrix.items():
        for row, verdict in column.items():
            if not isinstance(verdict, str):
                raise TypeError(f"the verdict of {label!r} on {row!r} is not a string: {verdict!r}")


def _check_rows(matrix, rows):
    missing = [(label, row) for row in rows for label in matrix if row not in matrix[label]]
    if missing:
        raise ValueError(f"the matrix has no verdict for (column, row) {missing[0]}.")


def requirements(matrix, rows, features, names=None):
    """For each row, what a function needs to pass it, read off the columns of ``matrix``.

    ``features`` maps each column label to be read to the list of features its function has
    (``[]`` for the plainest). A row needs the smallest feature sets among the columns that
    pass it ("nothing more" for none; several incomparable ones are joined with "or"), as far
    as the columns tell: a feature no column leaves out cannot be told apart from the others.
    A column that has such a set and more, and fails the row, is named as breaking it, with
    its short verdict; a row no column passes says so, with the verdict of the column that has
    every feature (or "in every column" when all the columns read give that verdict). ``names``: as in ``capability_html``."""
    if not isinstance(features, dict) or not features or not all(
        isinstance(v, (list, tuple)) and all(isinstance(f, str) for f in v)
        for v in features.values()
    ):
        raise TypeError("requirements: pass features as a dict from a column label to the list "
                        "of features that column's function has.")
    missing = [label for label in features if label not in matrix]
    if missing:
        raise ValueError(f"requirements: the columns {missing} are not in the matrix.")
    _check_rows({label: matrix[label] for label in features}, rows)
    errors = error_labels(matrix, names)
    order = list(dict.fromkeys(f for v in features.values() for f in v))
    sets = {label: frozenset(v) for label, v in features.items()}
    richest = max(features, key=lambda label: len(sets[label]))
    needs = {}
    for row in rows:
        passing = [label for label in features if matrix[label][row] == WORKS]
        if not passing:
            verdict = short_verdict(matrix[richest][row], errors)
            alike = all(short_verdict(matrix[label][row], errors) == verdict
                        for label in features)
            where = "in every column" if alike else f"at {richest}"
            needs[row] = f"none of these ({verdict} {where})"
            continue
        smallest = list(dict.fromkeys(
            sets[label] for label in passing
            if not any(sets[other] < sets[label] for other in passing)
        ))
        need = " or ".join(", ".join(f for f in order if f in needed) or "nothing more"
                           for needed in smallest)
        breaking = [label for label in features if matrix[label][row] != WORKS
                    and any(sets[label] > needed for needed in smallest)]
        if breaking:
            label = breaking[0]
            # a feature that no passing column has is the one to blame
            present = frozenset().union(*(sets[other] for other in passing))
            extra = [f for f in order if f in sets[label] and f not in present] or [
                f for f in order if f in sets[label] and not any(f in n for n in smallest)]
            need += (f"; {', '.join(extra)} breaks it "
                     f"({short_verdict(matrix[label][row], errors)})")
        needs[row] = need
    return needs


def requirements_html(needs, heading):
    """``requirements``'s answer as a two-column HTML table; ``heading`` heads the second."""
    if not isinstance(needs, dict) or not all(isinstance(v, str) for v in needs.values()):
        raise TypeError("requirements_html: pass the dict that requirements returns.")
    if not isinstance(heading, str):
        raise TypeError(f"requirements_html: heading must be a string, got {heading!r}.")
    body = "".join(
        f'<tr><th scope="row" style="text-align: left; padding-right: 1em; white-space: nowrap">'
        f"{html.escape(row)}</th><td>{html.escape(need)}</td></tr>"
        for row, need in needs.items()
    )
    return (
        f'{_SCROLLS.format(label="what each row needs")}<table style="font-size: 0.9em">'
        f'<thead><tr><th scope="col" style="text-align: left">to pass</th><th scope="col" '
        f'style="text-align: left">{html.escape(heading)}</th></tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def grid_html(grid, colours, corner=""):
    """A table of short words, each cell coloured by its word: ``grid`` maps a row name to a
    dict from a column name to a word (every row with the same columns), ``colours`` maps
    each word that occurs to a CSS colour (light ones: the text is black). ``corner`` heads
    the column of row names."""
    if not isinstance(grid, dict) or not grid or not all(isinstance(r, dict) for r in grid.values()):
        raise TypeError("grid_html: pass the grid as a dict from a row name to a dict from a "
                        "column name to a word.")
    columns = list(next(iter(grid.values())))
    for name, row in grid.items():
        if list(row) != columns:
            raise ValueError(f"grid_html: row {name!r} has columns {list(row)}, not {columns}.")
        unknown = [word for word in row.values() if word not in colours]
        if unknown:
            raise ValueError(f"grid_html: no colour for {unknown[0]!r} (row {name!r}).")
    head = "".join(f'<th scope="col" style="padding: 0.1em 0.6em">{html.escape(c)}</th>'
                   for c in columns)
    body = "".join(
        f'<tr><th scope="row" style="text-align: left; padding-right: 0.6em; '
        f'white-space: nowrap; font-family: monospace">{html.escape(name)}</th>'
        + "".join(f'<td style="padding: 0.1em 0.6em; text-align: center; color: #000; '
                  f'background: {colours[word]}">{html.escape(word)}</td>'
                  for word in row.values())
        + "</tr>"
        for name, row in grid.items()
    )
    return (
        f'{_SCROLLS.format(label=html.escape(corner or "table", quote=True))}'
        '<table style="border-collapse: separate; border-spacing: 2px; font-size: 0.9em">'
        f'<thead><tr><th scope="col" style="text-align: left">{html.escape(corner)}</th>'
        f"{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )
