"""First and second gradients of one small program, in Simple Grad and in PyTorch.

The chapter on aggregate operators (and its exercises) asks the same question of every
version of a fused operator: do its gradients of the loss ``L0 = sum(f(a, b))`` and of the
loss built from them, ``L1 = sum(dL0/da * dL0/da + dL0/db * dL0/db)``, agree with PyTorch's?
With ``reads_output=True``, ``L1`` also adds ``f(a, b)`` itself, so that the second
backward hands an entry with two outputs a gradient for both in one call.
The harness lives here so that the chapter shows the versions and the verdicts, not the
bookkeeping.
"""
import html
import re

import torch

from . import simple_grad
from .simple_grad import Variable, gradient_tape, quiet_trace, reset_tape
from .tape_tools import PropagateCalls, operation_counts

GRADIENT_NAMES = ("dL0/da", "dL0/db", "dL1/da", "dL1/db")


def _require_program(function, where):
    if not callable(function):
        raise TypeError(
            f"{where}: pass the function of (a, b) itself, such as "
            f"fused_operator, not a {type(function).__name__}."
        )


def _require_inputs(a_value, b_value, where):
    for name, value in (("a_value", a_value), ("b_value", b_value)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"{where}: {name} is the tensor a program starts from, not "
                f"a {type(value).__name__}."
            )


def _require_flag(reads_output, where):
    if not isinstance(reads_output, bool):
        raise TypeError(
            f"{where}: reads_output is True or False (whether L1 also adds "
            f"the program's output), not a {type(reads_output).__name__}."
        )


def _first_loss(function, a_value, b_value):
    """Record L0 = sum(function(a, b)) on a fresh tape; return a, b and L0."""
    reset_tape()
    a = Variable.constant(a_value, name="a")
    b = Variable.constant(b_value, name="b")
    return a, b, function(a, b).sum(name="L0")


def two_orders(
    function, a_value, b_value, *, entries=None, gradient=None,
    reads_output=False,
):
    """Simple Grad's [dL0/da, dL0/db, dL1/da, dL1/db] (None for a known zero).

    ``L0 = sum(function(a, b))`` and ``L1 = sum(dL0/da^2 + dL0/db^2)``, on a fresh tape;
    ``L1 = sum(dL0/da^2 + dL0/db^2 + function(a, b))`` with ``reads_output=True``.
    If ``entries`` is a list, the number of tape entries the first and the second backward
    recorded is appended to it. ``gradient`` is the engine's ``grad`` unless an exercise
    passes its own.
    """
    _require_program(function, "two_orders")
    _require_inputs(a_value, b_value, "two_orders")
    if entries is not None and not isinstance(entries, list):
        raise TypeError(
            "two_orders: entries is a list to append the two counts to, not "
            f"a {type(entries).__name__}."
        )
    gradient = simple_grad.grad if gradient is None else gradient
    _require_program(gradient, "two_orders(gradient=...)")
    _require_flag(reads_output, "two_orders")
    reset_tape()
    a = Variable.constant(a_value, name="a")
    b = Variable.constant(b_value, name="b")
    output = function(a, b)
    L0 = output.sum(name="L0")
    start = len(gradient_tape)
    dL0_da, dL0_db = gradient(L0, [a, b])
    first = len(gradient_tape) - start
    squares = dL0_da * dL0_da + dL0_db * dL0_db
    L1 = (squares + output if reads_output else squares).sum(name="L1")
    start = len(gradient_tape)
    dL1_da, dL1_db = gradient(L1, [a, b])
    if entries is not None:
        entries += [first, len(gradient_tape) - start]
    return [dL0_da, dL0_db, dL1_da, dL1_db]


def torch_two_orders(function, a_value, b_value, *, reads_output=False):
    """PyTorch's [dL0/da, dL0/db, dL1/da, dL1/db] for the same two losses."""
    _require_program(function, "torch_two_orders")
    _require_inputs(a_value, b_value, "torch_two_orders")
    _require_flag(reads_output, "torch_two_orders")
    a = a_value.clone().requires_grad_()
    b = b_value.clone().requires_grad_()
    output = function(a, b)
    dL0_da, dL0_db = torch.autograd.grad(
        output.sum(), [a, b], create_graph=True
    )
    squares = dL0_da * dL0_da + dL0_db * dL0_db
    L1 = (squares + output if reads_output else squares).sum()
    return [dL0_da.detach(), dL0_db.detach(), *torch.autograd.grad(L1, [a, b])]


def compare(ours, expected, show=True):
    """True for each of Simple Grad's four gradients that matches PyTorch's.

    A None (a known zero) matches only zeros. ``show`` prints one line per gradient.
    """
    if not isinstance(ours, (list, tuple)) or len(ours) != 4:
        raise TypeError(
            "compare: ours is the list of four gradients that two_orders "
            "returned."
        )
    if not isinstance(expected, (list, tuple)) or len(expected) != 4:
        raise TypeError(
            "compare: expected is the list of four tensors that "
            "torch_two_orders returned."
        )
    right = []
    for name, x, y in zip(GRADIENT_NAMES, ours, expected):
        if x is not None and not isinstance(x, Variable):
            raise TypeError(
                f"compare: {name} is a {type(x).__name__}; Simple Grad's "
                "gradients are Variables (or None)."
            )
        value = torch.zeros_like(y) if x is None else x.value
        ok = value.shape == y.shape and torch.allclose(value, y)
        if show:
            shown = "None" if x is None else value.tolist()
            verdict = "right" if ok else "WRONG"
            print(f"{name}: {shown}  torch: {y.tolist()}  {verdict}")
        right.append(ok)
    return right


def entries_per_backward(function, a_value, b_value, *, reads_output=False):
    """[entries the first backward records, entries the second records].

    ``reads_output`` is passed on to ``two_orders``: with True, L1 also adds the output.
    """
    entries = []
    with quiet_trace():
        two_orders(
            function, a_value, b_value, entries=entries, reads_output=reads_output
        )
    return entries


def backward_operations(function, a_value, b_value):
    """How many operations of each kind the first backward records (a Counter)."""
    _require_program(function, "backward_operations")
    _require_inputs(a_value, b_value, "backward_operations")
    with quiet_trace():
        a, b, L0 = _first_loss(function, a_value, b_value)
        start = len(gradient_tape)
        simple_grad.grad(L0, [a, b])
    return operation_counts(gradient_tape[start:])


def propagate_runs(function, a_value, b_value, position=0):
    """How often the rule of the entry at ``position`` runs: [first grad, second grad]."""
    _require_program(function, "propagate_runs")
    _require_inputs(a_value, b_value, "propagate_runs")
    calls = PropagateCalls()
    with quiet_trace():
        a, b, L0 = _first_loss(function, a_value, b_value)
        if not 0 <= position < len(gradient_tape):
            raise ValueError(
                f"propagate_runs: the forward recorded {len(gradient_tape)} "
                f"entries, so there is no entry at position {position}."
            )
        with calls.counting(gradient_tape, "first"):
            dL0_da, dL0_db = simple_grad.grad(L0, [a, b])
        L1 = (dL0_da * dL0_da + dL0_db * dL0_db).sum(name="L1")
        with calls.counting(gradient_tape, "second"):
            simple_grad.grad(L1, [a, b])
    return [calls[position, "first"], calls[position, "second"]]


def side_by_side(*drawings, same_scale=False, titles=None):
    """Drawings next to each other on a page; a narrow screen stacks them.

    With ``same_scale``, each drawing may take at most its share of the widest one's width,
    so that when the column scales the widest down, the others shrink alike and their labels
    keep one size (the drawings must give their SVG width in pt, as Graphviz's do).
    ``titles``, one per drawing, are set above them in bold monospace: stacked on a phone, the
    drawings are otherwise told apart only by the order the prose gives."""
    from IPython.display import HTML

    if not drawings or not all(hasattr(d, "_repr_html_") for d in drawings):
        raise TypeError(
            "side_by_side: pass the drawings (what draw_tape or tape_legend "
            "returned)."
        )
    if not isinstance(same_scale, bool):
        raise TypeError(f"side_by_side: same_scale is True or False, got {same_scale!r}.")
    if titles is not None and (
        isinstance(titles, str)
        or len(titles) != len(drawings)
        or not all(isinstance(t, str) for t in titles)
    ):
        raise ValueError(
            f"side_by_side: titles is one string per drawing ({len(drawings)}), "
            f"got {titles!r}."
        )
    pictures = [d._repr_html_() for d in drawings]
    if titles is not None:
        # dark text in any theme: in dark mode too the drawings sit on a light panel,
        # where the theme's own colour for code is pale
        pictures = [f'<p style="{_TITLE_STYLE}">{html.escape(title)}</p>' + picture
                    for title, picture in zip(titles, pictures)]
    styles = [""] * len(pictures)
    if same_scale:
        widths = [_width_in_points(picture) for picture in pictures]
        styles = [f' style="max-width: {100 * w / max(widths):.1f}%"' for w in widths]
    cells = "".join(
        f"<div{style}>{picture}</div>" for style, picture in zip(styles, pictures)
    )
    return HTML(
        '<div style="display: flex; flex-wrap: wrap; gap: 1em; '
        f'align-items: flex-start">{cells}</div>'
    )


_TITLE_STYLE = "font-family: monospace; font-weight: bold; color: #222"
_SVG_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)pt"')


def _width_in_points(picture):
    found = _SVG_WIDTH.search(picture)
    if found is None:
        raise ValueError(
            "side_by_side: same_scale needs drawings whose SVG gives its width in pt "
            "(draw_graph's and draw_tape's do)."
        )
    return float(found.group(1))


RECORDED_FILL = "#ffd966"  # yellow: torchviz's own fills are green, light blue, orange, grey


def _nodes_under(roots):
    """Every autograd node reachable from ``roots`` (grad_fns), each once."""
    seen, stack = {}, [root for root in roots if root is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(n for n, _ in getattr(node, "next_functions", ()) if n is not None)
    return seen


def mark_recorded_backward(graph, gradients, forward_output, fill=RECORDED_FILL):
    """``graph``, drawn by ``draw_graph(gradients, ...)``, with the backward nodes that a
    recorded backward (``create_graph=True``) made filled in ``fill``: the nodes under
    ``gradients`` that are not in the graph of ``forward_output``, the value that backward
    started from. The copy's ``marked`` is how many nodes it filled; its description says so.
    ``forward_output`` must still be alive, so that its nodes are the ones the gradient reads.
    """
    from .graphs import Graph, _check_outputs

    if getattr(forward_output, "grad_fn", None) is None:
        raise ValueError(
            "mark_recorded_backward: forward_output has no graph; pass the value the "
            "recorded backward started from (the loss)."
        )
    outputs = _check_outputs(gradients)
    roots = [t.grad_fn for t in (outputs if isinstance(outputs, tuple) else (outputs,))]
    forward = _nodes_under([forward_output.grad_fn])
    made = [key for key in _nodes_under(roots) if key not in forward]
    names = getattr(graph, "node_names", {})  # draw_graph's renaming of torchviz's ids
    svg = graph.svg
    for key in made:
        name = names.get(str(key))
        title = re.compile(rf'(<title>{name}</title>\n<polygon fill=")lightgrey"')
        svg, found = title.subn(rf'\g<1>{fill}"', svg)
        if name is None or found != 1:
            raise ValueError(
                "mark_recorded_backward: graph was not drawn from these gradients "
                "(draw_graph(gradients, ...))."
            )
    if not made:
        raise ValueError(
            "mark_recorded_backward: no node under gradients was made after "
            "forward_output; was the backward recorded (create_graph=True)?"
        )
    description = (
        f"{graph.description.rstrip('.')}; filled yellow: the {len(made)} nodes the "
        "recorded backward made."
    )
    marked = Graph(svg, graph.node_count, description)
    marked.edges = graph.edges
    marked.marked = len(made)
    return marked
