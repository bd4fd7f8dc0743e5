"""Measuring a Simple Grad tape without showing Python's internals.

The chapters ask three questions of a tape: what does an entry's backward rule
keep alive, how many bytes is that, and how often does each rule run. The
answers need ``__closure__``, ``co_freevars`` and wrapped closures; they live
here so that a chapter shows the measurement, not the plumbing.
"""

import contextlib
import functools
from collections import Counter

import torch

from .simple_grad import TapeEntry, Variable


def _require_entry(entry, where):
    # chapter 1 defines its own TapeEntry class: any entry with its fields will do
    if not all(hasattr(entry, field) for field in TapeEntry._fields):
        raise TypeError(
            f"{where}: expected a TapeEntry (an element of gradient_tape), "
            f"got a {type(entry).__name__}."
        )


def _unwrapped(propagate):
    # PropagateCalls wraps rules with functools.wraps: look at the rule itself
    while hasattr(propagate, "__wrapped__"):
        propagate = propagate.__wrapped__
    return propagate


def captured_by(entry):
    """What an entry's ``propagate`` keeps alive: {free variable: value}.

    These are the values saved for the backward pass: Variables, tensors,
    shapes, whatever the closure refers to.
    """
    _require_entry(entry, "captured_by")
    propagate = _unwrapped(entry.propagate)
    code = getattr(propagate, "__code__", None)
    if code is None:
        return {}
    cells = propagate.__closure__ or ()
    return {
        name: cell.cell_contents for name, cell in zip(code.co_freevars, cells)
    }


def _reachable(values, entered=None):
    """Each of ``values``, followed by what it holds: the items of tuples, lists,
    sets and dicts, and the values a function's closure captures (a helper
    defined next to ``propagate`` keeps what it captures alive too)."""
    entered = set() if entered is None else entered
    for value in values:
        yield value
        if id(value) in entered:
            continue
        if isinstance(value, (tuple, list, set, frozenset)):
            held = value
        elif isinstance(value, dict):
            held = value.values()
        elif callable(value) and getattr(value, "__closure__", None):
            held = [_contents(cell) for cell in value.__closure__]
        else:
            continue
        entered.add(id(value))  # a container holding itself is entered once
        yield from _reachable(held, entered)


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # a variable not yet assigned when the closure was made
        return None


def _storages(values):
    """{storage address: (bytes, belongs to a leaf)} of the tensors that values
    keep alive, directly or through containers and closures (see _reachable)."""
    kept = {}
    for value in _reachable(values):
        is_leaf = False
        if isinstance(value, Variable) or hasattr(value, "value"):
            value, is_leaf = value.value, value.is_leaf
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            # a view and its base share one storage: it counts once
            kept[storage.data_ptr()] = (storage.nbytes(), is_leaf)
    return kept


def bytes_kept(values):
    """Bytes of tensor storage that ``values`` keep alive, each storage once.

    ``values`` holds Variables, tensors or anything else (which keeps no
    tensor storage and counts 0), for example ``captured_by(entry).values()``.
    """
    return sum(size for size, _ in _storages(values).values())


def bytes_kept_by_tape(entries):
    """(all, beyond the leaves): bytes that the closures of ``entries`` keep,
    directly or through tuples, lists, sets, dicts and the closures of helpers.

    The leaves are the inputs (Variable.constant); "beyond the leaves" is what
    the tape keeps that the caller would not keep anyway.
    """
    entries = list(entries)
    for entry in entries:
        _require_entry(entry, "bytes_kept_by_tape")
    values = [v for entry in entries for v in captured_by(entry).values()]
    kept = _storages(values)
    total = sum(size for size, _ in kept.values())
    return total, sum(size for size, leaf in kept.values() if not leaf)


def operation_counts(entries):
    """How many of ``entries`` each operation recorded: Counter({"operator_mul": 2, ...}).

    An entry's operation is the function its ``propagate`` was defined in (the name
    ``draw_tape`` writes in the entry's box); pass ``gradient_tape[start:]`` to count what
    one ``grad`` call recorded.
    """
    entries = list(entries)
    counts = Counter()
    for entry in entries:
        _require_entry(entry, "operation_counts")
        counts[operation_name(entry)] += 1
    return counts


def operation_name(entry):
    """The operation that recorded ``entry``: the function its ``propagate`` was defined in."""
    _require_entry(entry, "operation_name")
    propagate = _unwrapped(entry.propagate)
    qualname = getattr(propagate, "__qualname__", type(propagate).__name__)
    outer = qualname.split(".<locals>.")
    return outer[-2].split(".")[-1] if len(outer) > 1 else qualname


def rules_that_recorded(tape, run):
    """Run ``run()`` and say, for each entry it appends to ``tape``, which rule recorded it.

    Returns ``(what run() returned, recorded_by)``, where ``recorded_by`` maps the position of
    every new entry to the position of the entry whose ``propagate`` was running when it was
    appended, or to ``None`` when ``grad`` itself appended it (adding two contributions to one
    value). The rules are wrapped only while ``run()`` runs, and compute what they computed.
    """
    if not isinstance(tape, list):
        raise TypeError(
            "rules_that_recorded: pass the tape itself (gradient_tape), not a "
            f"{type(tape).__name__}."
        )
    if not callable(run):
        raise TypeError(
            "rules_that_recorded: pass a function to run, e.g. "
            "lambda: grad(L1, [a, b])."
        )
    recorded_by = {}

    def tracked(position, propagate):
        @functools.wraps(propagate)
        def propagate_and_note(dL_doutputs):
            before = len(tape)
            result = propagate(dL_doutputs)
            for new in range(before, len(tape)):
                recorded_by[new] = position
            return result

        return propagate_and_note

    original = list(tape)
    for position, entry in enumerate(original):
        _require_entry(entry, "rules_that_recorded")
        tape[position] = entry._replace(propagate=tracked(position, entry.propagate))
    start = len(tape)
    try:
        result = run()
    finally:
        for position, entry in enumerate(original):
            tape[position] = entry
    return result, {new: recorded_by.get(new) for new in range(start, len(tape))}


class PropagateCalls:
    """Counts how often each entry's ``propagate`` runs, per labelled call.

    ``with calls.counting(tape, "grad(L0)"): grad(L0, ...)`` counts the rules
    that this ``grad`` call runs; ``calls[3, "grad(L0)"]`` then says how often
    entry 3 ran in it, and ``calls.total("grad(L0)")`` how many rules ran.
    The rules are wrapped in place on ``tape`` (once); a wrapped rule computes
    exactly what it computed before.
    """

    def __init__(self):
        self._calls = Counter()
        self._label = None

    def _wrap(self, index, propagate):
        @functools.wraps(propagate)
        def counted(dL_doutputs):
            self._calls[index, self._label] += 1
            return propagate(dL_doutputs)

        counted.counted_by = self  # so that a rule is wrapped only once
        return counted

    @contextlib.contextmanager
    def counting(self, tape, label):
        """Count, under ``label``, the rules of ``tape`` run inside the block."""
        if not isinstance(tape, list):
            raise TypeError(
                "PropagateCalls.counting: pass the tape itself "
                f"(gradient_tape), not a {type(tape).__name__}."
            )
        for index, entry in enumerate(tape):
            _require_entry(entry, "PropagateCalls.counting")
            if getattr(entry.propagate, "counted_by", None) is not self:
                counted = self._wrap(index, entry.propagate)
                tape[index] = entry._replace(propagate=counted)
        previous, self._label = self._label, label
        try:
            yield self
        finally:
            self._label = previous

    def __getitem__(self, key):
        index, label = key
        return self._calls[index, label]

    def total(self, label):
        """How many propagate calls ran under ``label``."""
        return sum(n for (_, seen), n in self._calls.items() if seen == label)


def backward_nodes_run(loss, inputs):
    """The backward nodes that ``torch.autograd.grad(loss, inputs)`` runs, in order.

    The graph is kept (``retain_graph=True``), so the same loss can be asked again.
    """
    return nodes_run_by(
        lambda loss: torch.autograd.grad(loss, inputs, retain_graph=True), loss
    )


def nodes_run_by(run, loss):
    """The backward nodes of ``loss``'s graph that ``run(loss)`` enters, in order: ``run``
    is any backward, ``lambda L: L.backward(inputs=[x])`` say.

    Every node of the graph gets a pre-hook that records its name when the engine calls
    it; the hooks are removed afterwards.
    """
    if not callable(run):
        raise TypeError(
            f"nodes_run_by: run is a function of the loss that runs a backward, "
            f"got {type(run).__name__}."
        )
    if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
        raise TypeError(
            "the loss must be a tensor computed from inputs that require "
            "grad (it needs a grad_fn)."
        )
    ran, seen, stack, handles = [], set(), [loss.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)

        def record(grad_outputs, node=node):
            ran.append(node.name())

        handles.append(node.register_prehook(record))
        stack.extend(next_node for next_node, _ in node.next_functions)
    try:
        run(loss)
    finally:
        for handle in handles:
            handle.remove()
    return ran


SHORT_LABEL = 24  # characters of a legend label that can share its row


def _require_key_text(drawing, name, text, attribute, meaning, example, missing):
    """tape_legend's check of an optional key entry: ``text`` (None to leave the
    entry out) is a str (``meaning`` says what it holds), and the drawing has something in
    ``attribute`` for it to explain."""
    if text is None:
        return
    if not isinstance(text, str):
        raise TypeError(f"tape_legend: {name} {meaning}, as a str "
                        f"(e.g. {example}), got {text!r}.")
    if not getattr(drawing, attribute, None):
        raise ValueError(f"tape_legend: the drawing {missing}; leave {name} out.")


def tape_legend(drawing, not_run=None, earlier=None, captured=None, gradient=None,
                marked=None):
    """A key to a ``draw_tape`` drawing: one sample box per phase, in the drawing's own styles.

    ``drawing`` is what ``draw_tape`` returned. Each of its phases gets a box with that phase's
    fill and border, named by the phase. ``not_run``, when the drawing greys entries out, is
    what the grey style means there (e.g. "rule not run by grad(L1)"); one meaning per book,
    so that a reader can carry the key from one chapter to the next. A last row shows how to
    read an arrow: an entry reads the values with arrows into it and writes the values its
    arrows point to, in the backward phases as in the forward one. ``earlier``, when some
    drawing marks values with ``draw_tape(..., earlier_values=...)``, is what that pale grey
    fill means there (e.g. "value made before grad(L1)"); it adds one ellipse to the key.
    ``captured``, when the drawing was made with ``show_captured=True`` and shows a value a
    ``propagate`` keeps without declaring it, is what that red dashed style means there (e.g.
    "captured, not declared"); it adds one ellipse to the key.
    ``gradient``, when the drawing labels values with their gradients
    (``draw_tape(..., gradients=...)``), is a sample such a label, e.g. "x\\ndy/dx = v9: the
    gradient of y with respect to x is the value v9"; it adds that ellipse to the key.
    ``marked``, when the drawing marks entries (``draw_tape(..., marked=...)``), is what the
    thick blue border means there (e.g. "addition where two paths meet"); it adds one box.
    """
    from .graphs import (CAPTURED_STYLE, EARLIER_VALUE_STYLE, MARKED_STYLE, PHASE_STYLES,
                         UNNEEDED_STYLE, Graph, _require_dot)

    phase_styles = getattr(drawing, "phase_styles", None)
    entries = getattr(drawing, "entries", None)
    if not isinstance(phase_styles, dict) or not isinstance(entries, list):
        raise TypeError(
            "tape_legend: pass the drawing that draw_tape returned, not a "
            f"{type(drawing).__name__}."
        )
    greyed = any(not entry["needed"] for entry in entries)
    if greyed and not isinstance(not_run, str):
        raise ValueError(
            "tape_legend: the drawing greys entries out; say what that means "
            "with not_run='...' (e.g. 'rule not run by grad(L1)')."
        )
    if not greyed and not_run is not None:
        raise ValueError(
            "tape_legend: the drawing greys nothing out, so not_run has "
            "nothing to explain; leave it out."
        )
    if earlier is not None and not isinstance(earlier, str):
        raise TypeError(
            "tape_legend: earlier says what the pale grey values mean, as a str "
            f"(e.g. 'value made before grad(L1)'), got {earlier!r}."
        )
    _require_key_text(drawing, "captured", captured, "orphans",
                      "says what the red dashed values mean", "'captured, not declared'",
                      "shows no captured value (draw it with show_captured=True)")
    _require_key_text(drawing, "gradient", gradient, "gradients",
                      "is a sample label of a value and its gradient", "'x\\ndy/dx = v9: ...'",
                      "labels no value with its gradient (draw it with gradients=...)")
    _require_key_text(drawing, "marked", marked, "marked",
                      "says what the thick blue border means", "'addition where two paths meet'",
                      "marks no entry (draw it with marked=[...])")
    _require_dot()

    import graphviz

    legend = graphviz.Digraph(
        graph_attr={"rankdir": "TB", "bgcolor": "white", "nodesep": "0.15",
                    "ranksep": "0.1"},
        node_attr={"fontsize": "12", "height": "0.2", "shape": "box"},
    )
    keys, styles = [], []
    for number, name in enumerate(phase_styles):
        label = name if "entry" in name else f"{name} entry"
        styles.append((f"phase{number}", label, PHASE_STYLES[number][0]))
        keys.append(f"{label}: {phase_styles[name]}")
    if greyed:
        styles.append(("not_run", not_run, UNNEEDED_STYLE))
        keys.append(f"{not_run}: white, dotted grey border")
    if earlier is not None:
        styles.append(("earlier", earlier, dict(EARLIER_VALUE_STYLE, shape="ellipse")))
        keys.append(f"{earlier}: an ellipse filled pale grey")
    if captured is not None:
        styles.append(("captured", captured, dict(CAPTURED_STYLE, shape="ellipse")))
        keys.append(f"{captured}: a red ellipse, dashed, joined by a red dashed line")
    if gradient is not None:
        styles.append(("gradient", gradient, {"shape": "ellipse"}))
        keys.append(gradient.replace("\n", " ") + " (a value's node, with its gradient)")
    if marked is not None:
        styles.append(("marked", marked, dict(MARKED_STYLE, style="filled",
                                              fillcolor="white")))
        keys.append(f"{marked}: an entry with a thick blue border, in its phase's fill")
    # At most two keys side by side, and a long label alone: a legend a phone's
    # width can show (two labels of SHORT_LABEL characters fit side by side).
    def short(style):
        return len(style[1]) <= SHORT_LABEL

    rows = []
    for style in styles:
        if rows and len(rows[-1]) == 1 and short(rows[-1][0]) and short(style):
            rows[-1].append(style)
        else:
            rows.append([style])
    for row_styles in rows:
        with legend.subgraph() as row:
            row.attr(rank="same")
            for node, label, style in row_styles:
                row.node(node, label=label, **style)
    for upper, lower in zip(rows, rows[1:]):  # keeps the rows in order
        legend.edge(upper[0][0], lower[0][0], style="invis")
    with legend.subgraph() as row:  # value -> entry -> value, below them
        row.attr(rank="same")
        row.node("read", label="value read", shape="ellipse")
        row.node("entry", label="entry", style="filled", fillcolor="white")
        row.node("written", label="value written", shape="ellipse")
        row.edge("read", "entry")
        row.edge("entry", "written")
    if styles:  # the arrows go below the styles
        legend.edge(rows[-1][0][0], "entry", style="invis")
    keys.append("an arrow goes from a value an entry reads to the entry, "
                "and from the entry to a value it writes")
    svg = legend.pipe(format="svg", encoding="utf-8")
    node_count = (
        len(phase_styles) + greyed + (earlier is not None) + (captured is not None)
        + (gradient is not None) + 3
    )
    return Graph(svg, node_count, description="Key: " + "; ".join(keys) + ".")
