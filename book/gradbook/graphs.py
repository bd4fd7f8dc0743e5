"""Draw PyTorch autograd graphs with torchviz, byte-identical from one run to the next.

torchviz names every node after the Python ``id()`` of the object it stands for, so two runs
of the same cell give two different SVGs. ``draw_graph`` renames the nodes ``node0``,
``node1``, ... in the order torchviz visits them, which depends only on the graph.
``draw_tape`` draws a Simple Grad tape the same way, with names taken from the tape itself.
"""
import html
import re
import shutil
import warnings
from collections import Counter

import torch

from .simple_grad import TapeEntry, Variable

INSTALL_GRAPHVIZ = """\
Graphviz's `dot` program is not on PATH, and torchviz needs it to draw autograd graphs.
Install it, then restart the kernel:
    Debian/Ubuntu:    sudo apt-get install graphviz
    macOS (Homebrew): brew install graphviz
    conda:            conda install -c conda-forge graphviz
(`pip install graphviz` installs only the Python bindings, not the `dot` program.)"""

# The node name at the start of a statement in the DOT body: "\t1402 [label=...]" or "\t1402 -> 1403".
STATEMENT_HEAD = re.compile(r"\d+")
XML_ID = re.compile(r' id="[^"]*"')
NODE_LABEL = re.compile(r'label=("(?:[^"\\]|\\.)*"|[^ \]]+)')
NODE_COLOR = re.compile(r"fillcolor=(\w+)")
# torchviz's colours say what kind of node a tensor is; uncoloured nodes are backward functions.
TENSOR_ROLES = {
    "darkolivegreen1": "outputs",
    "darkolivegreen3": "bases of views",
    "lightblue": "leaves",
    "orange": "saved tensors",
}


class GraphvizMissingError(RuntimeError):
    """The `dot` binary is missing; the message says how to install it."""


class Graph:
    """A graph rendered as SVG, with a text alternative; Jupyter and the site show it inline."""

    def __init__(self, svg, node_count, description=None):
        self.svg = svg
        self.node_count = node_count
        self.description = description or f"A graph with {node_count} nodes."

    def _repr_html_(self):
        # Inline SVG, so the page can give it an accessible name. The XML prologue is not
        # valid inside HTML, and graphviz's ids (graph0, node1, ...) would clash between graphs.
        svg = self.svg[self.svg.index("<svg"):]
        svg = XML_ID.sub("", svg)
        label = html.escape(self.description, quote=True)
        return svg.replace("<svg", f'<svg role="img" aria-label="{label}"', 1)

    def __repr__(self):
        # The default repr holds a memory address, which would change the stored output.
        return f"<graph with {self.node_count} nodes>"


def draw_graph(
    outputs, params=None, show_saved=False, loose_saved_edges=False, rank_gap=None, node_gap=None
):
    """Draw the autograd graph that produced ``outputs`` (a tensor or a tuple of tensors).

    ``params`` maps display names to tensors, as in ``torchviz.make_dot``; ``show_saved``
    also draws the tensors that built-in backward nodes saved. With ``loose_saved_edges``,
    the line from a node to a tensor it saved is dashed and does not take part in the layout:
    a saved tensor that is also a leaf then stays with the leaves at the top, instead of
    being pulled below the node that saved it (which can turn the drawing upside down).
    ``loose_saved_edges="leaves"`` loosens only the lines to saved leaves: every line is
    dashed, and a saved intermediate is drawn below the node that saved it, not on the top
    row (a narrower drawing).
    ``rank_gap`` is the vertical gap between rows of nodes in inches (Graphviz's ``ranksep``,
    0.5 by default): a smaller one keeps a deep, narrow graph within a phone's screen.
    ``node_gap`` is the horizontal gap between nodes in inches (``nodesep``, 0.25 by default).
    The returned Graph's ``edges`` lists the drawn arrows as (from label, to label).
    """
    outputs = _check_outputs(outputs)
    params = _check_params(params)
    if rank_gap is not None and not (isinstance(rank_gap, (int, float)) and rank_gap > 0):
        raise TypeError(f"draw_graph: rank_gap must be a positive number of inches, got {rank_gap!r}.")
    if node_gap is not None and not (isinstance(node_gap, (int, float)) and node_gap > 0):
        raise TypeError(f"draw_graph: node_gap must be a positive number of inches, got {node_gap!r}.")
    if loose_saved_edges not in (False, True, "leaves"):
        raise ValueError(
            f"draw_graph: loose_saved_edges is True, False or 'leaves', got {loose_saved_edges!r}."
        )
    _require_dot()

    import torchviz  # imported late so that a missing `dot` is reported first

    with warnings.catch_warnings():
        # torchviz 0.0.3 compares versions with distutils' deprecated LooseVersion.
        warnings.simplefilter("ignore", DeprecationWarning)
        dot = torchviz.make_dot(outputs, params=params, show_saved=show_saved)
    names = {}
    dot.body = [_relabel(line, names) for line in dot.body]
    # torchviz writes a saved leaf twice under one id, as a leaf (light blue) and as
    # saved (orange); Graphviz fills it by the last. Every leaf has the light-blue line,
    # so this finds them all.
    leaves = {
        line.split()[0] for line in dot.body
        if "->" not in line and "fillcolor=lightblue" in line
    }
    if show_saved:
        dot.body = _leaves_stay_leaves(dot.body)
    if loose_saved_edges:
        dot.body = [_loosen(line, loose_saved_edges == "leaves", leaves) for line in dot.body]
    # An opaque background keeps black strokes readable on a dark page.
    dot.graph_attr["bgcolor"] = "white"
    if rank_gap is not None:
        dot.graph_attr["ranksep"] = str(rank_gap)
    if node_gap is not None:
        dot.graph_attr["nodesep"] = str(node_gap)
    svg = dot.pipe(format="svg", encoding="utf-8")
    graph = Graph(svg, node_count=len(names), description=describe(dot.body))
    graph.edges = _arrows(dot.body)
    graph.node_names = names  # torchviz's id of a node -> its id in the SVG
    return graph


def _leaves_stay_leaves(body):
    """Keep a leaf that a built-in node saved drawn as a leaf.

    With ``show_saved``, torchviz declares a built-in node's saved tensor orange (after the
    line ``node -> tensor [dir=none]``) before it visits that node's inputs; whether a saved
    leaf ends light blue or orange then depends on the order of the walk: in
    ``(b * (a * b)).sum()``, ``b`` would end orange, labelled ``other``. After such an
    orange line that comes after the leaf's last light-blue one, the leaf's line is
    written again. A custom Function's saved tensors (``tensor -> node [dir=none]``, and
    drawn orange on purpose, see ``saved_leaves``) stay as they are.
    """
    leaf_line, last_leaf_line = {}, {}
    for position, line in enumerate(body):
        if "->" not in line and "fillcolor=lightblue" in line:
            leaf_line[line.split()[0]] = line
            last_leaf_line[line.split()[0]] = position
    fixed = []
    for position, line in enumerate(body):
        fixed.append(line)
        name = line.split()[0] if "->" not in line else None
        if (
            name in leaf_line and "fillcolor=orange" in line and position > last_leaf_line[name]
            and position > 0 and "[dir=none]" in body[position - 1]
            and body[position - 1].partition(" [")[0].split("->")[1].strip() == name
        ):
            fixed.append(leaf_line[name])
    return fixed


def _loosen(line, only_leaves, leaves):
    """A saved-tensor line (dir=none) dashed; out of the layout unless only_leaves and the
    saved tensor is no leaf."""
    if "[dir=none]" not in line:
        return line
    saved = line.partition(" [")[0].split("->")[1].strip()
    if only_leaves and saved not in leaves:
        return line.replace("[dir=none]", "[dir=none style=dashed]")
    return line.replace("[dir=none]", "[constraint=false dir=none style=dashed]")


def _arrows(body):
    """The directed edges of a torchviz DOT body, as (from label, to label) pairs."""
    labels = {}
    for line in body:
        if "->" not in line and NODE_LABEL.search(line):
            label = NODE_LABEL.search(line).group(1).strip('"').split()
            labels[line.split()[0]] = label[0]
    arrows = []
    for line in body:
        if "->" in line and "dir=none" not in line:
            head = line.partition(" [")[0].split("->")
            source, target = (part.strip() for part in head)
            arrows.append((labels.get(source, source), labels.get(target, target)))
    return arrows


def _require_dot():
    if shutil.which("dot") is None:
        raise GraphvizMissingError(INSTALL_GRAPHVIZ)


def describe(body):
    """A text alternative for an autograd graph: its tensors by role, then its backward nodes."""
    # torchviz may declare a node twice (a leaf that is also saved); like Graphviz, let the
    # last declaration win, in the order the nodes first appear.
    declarations = {}
    for line in body:
        if "->" not in line and NODE_LABEL.search(line):
            declarations[line.split()[0]] = line
    tensors = {role: [] for role in TENSOR_ROLES.values()}
    functions = Counter()
    for line in declarations.values():
        words = NODE_LABEL.search(line).group(1).strip('"').split()  # "name\n (3, 3)" or "MulBackward0"
        color = NODE_COLOR.search(line)
        if color and color.group(1) in TENSOR_ROLES:
            named = not words[0].startswith("(")
            name, shape = (words[0], words[1:]) if named else ("a tensor", words)
            tensors[TENSOR_ROLES[color.group(1)]].append(f"{name} of shape {' '.join(shape)}")
        else:
            functions[" ".join(words)] += 1
    parts = [f"{role}: {', '.join(items)}" for role, items in tensors.items() if items]
    if functions:
        steps = ", ".join(f"{name} x{count}" if count > 1 else name for name, count in functions.items())
        parts.append(f"backward nodes: {steps}")
    return "Autograd graph. " + "; ".join(parts) + "."


def _relabel(line, names):
    """Rename the id()-based node names at the head of one DOT statement; labels stay as they are."""
    head, bracket, attributes = line.partition(" [")
    head = STATEMENT_HEAD.sub(lambda m: names.setdefault(m.group(0), f"node{len(names)}"), head)
    return head + bracket + attributes


def _check_outputs(outputs):
    if isinstance(outputs, torch.Tensor):
        return outputs
    if isinstance(outputs, (tuple, list)) and outputs:
        for position, item in enumerate(outputs):
            if not isinstance(item, torch.Tensor):
                raise TypeError(
                    f"draw_graph: outputs[{position}] is a {type(item).__name__}, not a tensor; "
                    "pass a tensor or a tuple of tensors."
                )
        return tuple(outputs)
    raise TypeError(
        f"draw_graph: expected a tensor or a non-empty tuple of tensors, got {outputs!r}."
    )


def _check_params(params):
    if params is None:
        return None
    if not isinstance(params, dict):
        raise TypeError(
            f"draw_graph: params must be a dict of name -> tensor, got a {type(params).__name__}."
        )
    for name, value in params.items():
        if not isinstance(name, str) or not isinstance(value, torch.Tensor):
            raise TypeError(
                f"draw_graph: params entry {name!r} -> {type(value).__name__} is not a "
                "str -> tensor pair; name each tensor you want labelled, e.g. {'x': x}."
            )
    return params


# Styles of the tape's phases, told apart by border as well as by colour; the
# words are those of the text alternative.
PHASE_STYLES = [
    ({"style": "filled", "fillcolor": "lightgrey"}, "grey, solid border"),
    (
        # not light blue: in torchviz's graphs light blue marks a leaf
        {"style": "filled,dashed", "fillcolor": "khaki1", "penwidth": "2"},
        "yellow, dashed border",
    ),
    (
        # not orange: in torchviz's graphs orange marks a saved tensor
        {"style": "filled,bold", "fillcolor": "plum", "penwidth": "2"},
        "plum, bold border",
    ),
    (
        {"style": "filled", "fillcolor": "palegreen", "peripheries": "2"},
        "pale green, double border",  # dotted means "not run"
    ),
    (
        # a forward entry singled out, e.g. one whose rule a later call runs
        {"style": "filled,bold", "fillcolor": "lightgrey", "color": "darkorchid",
         "penwidth": "3"},
        "grey, bold purple border",
    ),
]
UNNEEDED_STYLE = {
    "style": "filled,dotted",
    "fillcolor": "white",
    "color": "gray60",
    "fontcolor": "gray45",
}
CAPTURED_STYLE = {"style": "dashed", "color": "red3", "fontcolor": "red3"}
# the words under a captured value's name: the phrase the key gives (tape_legend(captured=...))
CAPTURED_LABEL = "captured, not declared"
EARLIER_VALUE_STYLE = {"style": "filled", "fillcolor": "gray90"}  # a value made earlier
# an entry the text points at: its phase's fill, a thick blue border
MARKED_STYLE = {"color": "blue3", "penwidth": "4"}


def draw_tape(
    entries,
    first_index=0,
    *,
    gradients=None,
    loss="L",
    phases=None,
    unneeded=(),
    show_captured=False,
    compact=False,
    max_width=None,
    phase_order=None,
    earlier_values=(),
    names=None,
    marked=(),
):
    """Draw a Simple Grad tape: a box per entry, an ellipse per value, inputs -> entry -> outputs.

    ``entries`` is ``gradient_tape`` or a slice of it; ``first_index`` is the position of its
    first entry on the whole tape, so that a slice keeps the tape's numbering in its labels.
    ``gradients`` maps value names to their gradients (Variables or names): each such value is
    labelled ``dL/dx = v6``, with ``loss`` as L; a gradient written out as numbers (a string
    with a space, such as ``"[4, 5, 6]"``) goes on a line of its own, to keep the drawing
    narrow. ``phases`` is a list of (name, start, end)
    ranges of tape positions; each phase name gets its own fill and border. The positions in
    ``unneeded`` are greyed out. ``show_captured`` also draws, with a red dashed edge, every
    Variable an entry's backward rule keeps that is neither an input nor an output of that
    entry, labelled ``(captured, not declared)`` (``CAPTURED_LABEL``). Such a value is an orphan, whose path the second backward cannot follow, if no
    entry wrote it; one that another entry wrote is drawn too, though its path is on the tape
    (the test looks at one entry at a time).
    ``compact`` packs a large tape tighter, with "mul" for "operator_mul" in the boxes.
    ``max_width`` (in points, as the SVG's width) scales a wider drawing down to that width, so
    that it fits a page's column; a narrower drawing keeps its size.
    ``phase_order`` names every phase of the tape in the order the styles are handed out (by
    default, the order the drawn entries meet them). Drawings of parts of one tape that pass
    the same list give each phase the same style, and each drawing's key
    (``phase_styles``, read by ``tape_legend``) then lists every phase of the list.
    ``earlier_values`` names values drawn filled in pale grey (``EARLIER_VALUE_STYLE``):
    values that existed before the drawn part of the tape, e.g. before a second ``grad``.
    ``names`` maps value names to the program's names for them: ``{"v0": "t"}`` labels
    ``v0`` as ``t = v0``. The positions in ``marked`` keep their fill and get a thick blue
    border (``MARKED_STYLE``), for entries the text points at.
    """
    entries = _check_entries(entries)
    message = (f"draw_tape: first_index must be a non-negative int (the position of the first "
               f"entry on the tape), got {first_index!r}.")
    if not isinstance(first_index, int) or isinstance(first_index, bool):
        raise TypeError(message)
    if first_index < 0:
        raise ValueError(message)
    positions = range(first_index, first_index + len(entries))
    names_on_tape = {name for entry in entries for name in entry.inputs + entry.outputs}
    gradients = _check_gradients(gradients, names_on_tape, loss)
    phase_of = _check_phases(phases, positions)
    unneeded = _check_unneeded(unneeded, positions)
    marked = _check_unneeded(marked, positions, "marked")
    earlier_values = _check_earlier_values(earlier_values, names_on_tape)
    names = _check_names(names, names_on_tape)
    if max_width is not None and (
        isinstance(max_width, bool) or not isinstance(max_width, (int, float)) or max_width <= 0
    ):
        raise TypeError(
            f"draw_tape: max_width is a width in points (a positive number), got {max_width!r}."
        )
    _require_dot()

    import graphviz

    from .tape_tools import captured_by

    graph_attr = {"rankdir": "TB", "bgcolor": "white"}
    node_attr = {"fontsize": "12", "height": "0.2"}
    if compact:
        graph_attr.update(nodesep="0.1", ranksep="0.25")
        node_attr.update(margin="0.04,0.01")
    if max_width is not None:
        graph_attr["size"] = f"{max_width / 72:.4f},1000"  # inches; only ever scales down
    dot = graphviz.Digraph(graph_attr=graph_attr, node_attr=node_attr)
    phase_names = list(dict.fromkeys(phase_of.values()))
    if len(phase_names) > len(PHASE_STYLES):
        raise ValueError(
            f"draw_tape: at most {len(PHASE_STYLES)} distinct phase names can be told apart, "
            f"got {len(phase_names)}: {phase_names}; give phases that belong together one name."
        )
    if phase_order is not None:
        if not isinstance(phase_order, (list, tuple)) or not set(phase_names) <= set(
            phase_order
        ):
            raise ValueError(
                f"draw_tape: phase_order must list every phase drawn ({phase_names}), "
                f"got {phase_order!r}."
            )
        phase_names = list(dict.fromkeys(phase_order))
        if len(phase_names) > len(PHASE_STYLES):
            raise ValueError(
                f"draw_tape: at most {len(PHASE_STYLES)} distinct phase names can be told "
                f"apart, got {len(phase_names)} in phase_order."
            )
    style_of = {name: PHASE_STYLES[i] for i, name in enumerate(phase_names)}
    written_by_unneeded = {
        name
        for position, entry in zip(positions, entries)
        if position in unneeded
        for name in entry.outputs
    }
    values = {}  # value name -> node name, in the order values first appear
    labels = {}

    def value_node(name):
        if name not in values:
            values[name] = f"value{len(values)}"
            label = f"{names[name]} = {name}" if name in names else name
            if name in gradients:
                gradient = f"d{loss}/d{name} = {gradients[name]}"
                if " " in gradients[name]:  # numbers, not a name: a line of their own
                    gradient = gradient.replace(" = ", " =\n", 1)
                label += "\n" + gradient
            labels[name] = label.replace("\n", " ")
            attributes = {"label": label, "shape": "ellipse"}
            if name in written_by_unneeded:
                attributes.update(color="gray60", fontcolor="gray45")
            if name in earlier_values:
                attributes.update(EARLIER_VALUE_STYLE)
            dot.node(values[name], **attributes)
        return values[name]

    steps, parts, orphans = [], [], []
    for position, entry in zip(positions, entries):
        node = f"entry{position}"
        operation = _operation_name(entry.propagate)
        if compact:
            operation = operation.removeprefix("operator_")
        phase = phase_of.get(position)
        attributes = {"style": "filled", "fillcolor": "lightgrey"}
        if phase is not None:
            attributes = dict(style_of[phase][0])
        if position in unneeded:
            attributes.update(UNNEEDED_STYLE)
        if position in marked:
            attributes.update(MARKED_STYLE)
        dot.node(node, label=f"#{position} {operation}", shape="box", **attributes)
        reads = Counter(entry.inputs)  # a value read twice (b * b): one arrow, "×2"
        for name, count in reads.items():
            # decorate: a line ties the label to its own arrow, where arrows cross
            doubled = {"label": f"×{count}", "decorate": "true"}
            dot.edge(value_node(name), node, **(doubled if count > 1 else {}))
        for name in entry.outputs:
            dot.edge(node, value_node(name))
        step = f"#{position} {operation}: {', '.join(entry.inputs)} -> {', '.join(entry.outputs)}"
        if phase is not None:
            step += f" ({phase})"
        if position in unneeded:
            step += " (greyed out)"
        steps.append(step)
        parts.append({"position": position, "operation": operation, "phase": phase,
                      "needed": position not in unneeded})
        if show_captured:
            for variable, kept in captured_by(entry).items():
                declared = entry.inputs + entry.outputs
                if _is_variable(kept) and kept.name not in declared:
                    orphans.append({"position": position, "variable": variable,
                                    "name": kept.name})
    drawn_apart = 0  # orphans that no entry reads get a node of their own
    written = {name for entry in entries for name in entry.outputs}
    for orphan in orphans:
        # a value that later entries read is drawn once: the captured line joins it,
        # and it is red and dashed too when no entry wrote it (its path is lost)
        target = values.get(orphan["name"])
        if target is not None and orphan["name"] not in written:
            dot.node(target, **CAPTURED_STYLE)
        if target is None:
            target = f"orphan{drawn_apart}"
            drawn_apart += 1
            shown = orphan["variable"]
            if shown != orphan["name"]:
                shown += f" = {orphan['name']}"
            dot.node(target, label=f"{shown}\n({CAPTURED_LABEL})",
                     shape="ellipse", **CAPTURED_STYLE)
        dot.edge(f"entry{orphan['position']}", target, label="captured", arrowhead="none",
                 fontsize="12", **CAPTURED_STYLE)
    svg = dot.pipe(format="svg", encoding="utf-8")
    sentences = [
        f"Simple Grad tape with {len(entries)} entries and {len(values)} values. "
        + "; ".join(steps) + "."
    ]
    drawn_phases = list(dict.fromkeys(phase_of.values()))
    if drawn_phases:
        sentences.append("Phases: " + "; ".join(
            f"{name} ({style_of[name][1]})" for name in drawn_phases) + ".")
    if unneeded:
        sentences.append(f"{len(unneeded)} entries greyed out (white, dotted grey border).")
    if marked:
        sentences.append("Marked with a thick blue border: "
                         + ", ".join(f"#{p}" for p in sorted(marked)) + ".")
    if earlier_values:
        sentences.append("Values made earlier (pale grey fill): "
                         + ", ".join(sorted(earlier_values)) + ".")
    if gradients:
        sentences.append("Gradients: " + ", ".join(
            f"d{loss}/d{name} = {gradient}" for name, gradient in gradients.items()) + ".")
    for orphan in orphans:
        sentences.append(
            f"Entry #{orphan['position']} keeps {orphan['variable']} = {orphan['name']}, "
            "which is neither an input nor an output of that entry (red, dashed)."
        )
    graph = Graph(svg, node_count=len(entries) + len(values) + drawn_apart,
                  description=" ".join(sentences))
    graph.entries = parts
    graph.values = labels
    graph.orphans = orphans
    graph.phase_styles = {name: style_of[name][1] for name in phase_names}
    graph.earlier_values = sorted(earlier_values)
    graph.marked = sorted(marked)
    graph.gradients = dict(gradients)  # value name -> its gradient, as labelled
    return graph


def _is_variable(value):
    # a Simple Grad Variable, from gradbook.simple_grad or from chapter 1 itself
    return isinstance(value, Variable) or (
        hasattr(value, "name") and isinstance(getattr(value, "value", None), torch.Tensor)
    )


def _check_gradients(gradients, names_on_tape, loss):
    if gradients is None:
        return {}
    if not isinstance(loss, str):
        raise TypeError(f"draw_tape: loss is the loss's name (str), got {loss!r}.")
    if not isinstance(gradients, dict):
        raise TypeError(
            f"draw_tape: gradients must be a dict of value name -> gradient, got a "
            f"{type(gradients).__name__}; e.g. {{'a': dL_da, 'b': dL_db}}."
        )
    named = {}
    for name, gradient in gradients.items():
        if not isinstance(name, str):
            raise TypeError(
                f"draw_tape: gradients are keyed by value name (str), got {name!r}; "
                "write {x.name: dL_dx}."
            )
        if name not in names_on_tape:
            raise ValueError(
                f"draw_tape: gradients names {name!r}, which no drawn entry reads or writes."
            )
        if _is_variable(gradient):
            gradient = gradient.name
        if gradient is None:
            gradient = "None"
        if not isinstance(gradient, str):
            raise TypeError(
                f"draw_tape: the gradient of {name!r} must be a Variable, its name or None, "
                f"got a {type(gradient).__name__}."
            )
        named[name] = gradient
    return named


def _check_phases(phases, positions):
    if phases is None:
        return {}
    shape = "a list of (name, start, end) ranges of tape positions"
    if not isinstance(phases, (list, tuple)):
        raise TypeError(f"draw_tape: phases must be {shape}, got a {type(phases).__name__}.")
    phase_of = {}
    for phase in phases:
        if not (isinstance(phase, (list, tuple)) and len(phase) == 3
                and isinstance(phase[0], str)
                and all(isinstance(n, int) and not isinstance(n, bool) for n in phase[1:])):
            raise TypeError(f"draw_tape: phases must be {shape}; {phase!r} is not.")
        name, start, end = phase
        if not start <= end:
            raise ValueError(f"draw_tape: phase {name!r} ends ({end}) before it starts ({start}).")
        for position in range(start, end):
            if position in phase_of:
                raise ValueError(
                    f"draw_tape: tape position {position} is in two phases, "
                    f"{phase_of[position]!r} and {name!r}."
                )
            if position in positions:
                phase_of[position] = name
    return phase_of


def _check_names(names, names_on_tape):
    if names is None:
        return {}
    if not isinstance(names, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in names.items()
    ):
        raise TypeError(f"draw_tape: names maps value names to names (str), got {names!r}.")
    for name in names:
        if name not in names_on_tape:
            raise ValueError(f"draw_tape: named value {name!r} is not read or written by a drawn entry.")
    return names


def _check_earlier_values(earlier_values, names_on_tape):
    if isinstance(earlier_values, str) or not isinstance(earlier_values, (list, tuple, set)):
        raise TypeError(
            "draw_tape: earlier_values is a list of value names (str), got "
            f"{earlier_values!r}."
        )
    for name in earlier_values:
        if not isinstance(name, str):
            raise TypeError(f"draw_tape: earlier_values holds value names (str), got {name!r}.")
        if name not in names_on_tape:
            raise ValueError(
                f"draw_tape: earlier value {name!r} is not read or written by a drawn entry."
            )
    return set(earlier_values)


def _check_unneeded(unneeded, positions, argument="unneeded"):
    # unneeded or marked: a collection of drawn tape positions
    try:
        unneeded = set(unneeded)
    except TypeError:
        raise TypeError(
            f"draw_tape: {argument} is a collection of tape positions, got {unneeded!r}."
        ) from None
    for position in sorted(unneeded, key=repr):
        if not isinstance(position, int) or isinstance(position, bool):
            raise TypeError(
                f"draw_tape: {argument} holds tape positions (int), got {position!r}."
            )
        if position not in positions:
            raise ValueError(
                f"draw_tape: {argument} position {position} is not drawn "
                f"(the drawn entries are {positions.start} to {positions.stop - 1})."
            )
    return unneeded


def _operation_name(propagate):
    """'operator_mul' for the propagate closure defined inside operator_mul; else its name."""
    qualname = getattr(propagate, "__qualname__", type(propagate).__name__)
    outer = qualname.split(".<locals>.")
    return outer[-2].split(".")[-1] if len(outer) > 1 else qualname


def _check_entries(entries):
    if isinstance(entries, TapeEntry):
        raise TypeError("draw_tape: got a single TapeEntry; pass a list of entries, e.g. [entry].")
    if not isinstance(entries, (list, tuple)):
        raise TypeError(
            f"draw_tape: expected a list of TapeEntry (gradient_tape or a slice of it), got a "
            f"{type(entries).__name__}; wrap an iterator in list(...)."
        )
    if not entries:
        raise ValueError(
            "draw_tape: the tape is empty, so there is nothing to draw; run a computation on "
            "Variables first (reset_tape() empties the tape)."
        )
    for position, entry in enumerate(entries):
        # chapter 1 defines its own TapeEntry class: any entry with these fields will do
        if not all(hasattr(entry, field) for field in TapeEntry._fields):
            raise TypeError(
                f"draw_tape: entries[{position}] is a {type(entry).__name__}, not a TapeEntry; "
                "pass gradient_tape or a slice of it."
            )
        for field in ("inputs", "outputs"):
            names = getattr(entry, field)
            if not all(isinstance(name, str) for name in names):
                raise TypeError(
                    f"draw_tape: entries[{position}].{field} must hold value names (str), got "
                    f"{list(names)!r}; build entries with [x.name for x in ...]."
                )
    return list(entries)


def draw_partition(forward, backward):
    """Draw the forward and backward graphs a partitioner cut a joint graph into, and the cut.

    ``forward`` and ``backward`` are the FX ``GraphModule``s that AOTAutograd hands to its
    compilers. Each graph is drawn in its own frame, forward on the left, one box per input
    or operation with FX's own name (deterministic, so the SVG is the same on every run), and an
    arrow from each value to each operation that reads it. Inputs are light blue (``primals_*``)
    or yellow-green (``tangents_*``), operations grey. The values that cross the cut (the
    backward's inputs other than ``tangents_*``) have a thick orange border in the forward
    frame, and orange arrows from there into the backward frame; an operation of the backward
    whose name the forward also computes is computed again there and has a dashed border.
    The returned Graph also has ``edges`` ((from, to) names, ``"backward:"`` prefixed inside
    the backward frame), ``saved`` and ``recomputed`` (names, in graph order).
    """
    _require_dot()
    import graphviz  # installed with torchviz

    def operations(graph_module):
        kinds = ("placeholder", "call_function")
        return [node for node in graph_module.graph.nodes if node.op in kinds]

    forward_nodes = operations(forward)
    forward_names = [node.name for node in forward_nodes]
    backward_nodes = operations(backward)
    saved = [
        node.name for node in backward_nodes
        if node.op == "placeholder" and not node.name.startswith("tangents")
    ]
    (output,) = forward.graph.find_nodes(op="output")
    handed_over = {getattr(value, "name", None) for value in output.args[0]}
    missing = [name for name in saved if name not in handed_over]
    if missing:
        raise ValueError(
            f"draw_partition: the backward reads {missing}, which the forward graph does not "
            "return: pass the two graphs of one partition."
        )
    recomputed = [
        node.name for node in backward_nodes
        if node.op == "call_function" and node.name in forward_names
    ]
    dot = graphviz.Digraph(
        graph_attr={"bgcolor": "white", "nodesep": "0.25", "ranksep": "0.3"},
        node_attr={"shape": "box", "style": "filled", "fillcolor": "lightgrey",
                   "fontname": "monospace", "fontsize": "11", "height": "0.25"},
        edge_attr={"arrowsize": "0.6"},
    )
    edges = []

    def box(frame, key, node, dashed=False):
        if node.op == "placeholder":
            color = "lightblue" if node.name.startswith("primals") else "darkolivegreen1"
        else:
            color = "lightgrey"
        style = "filled,dashed" if dashed else "filled"
        border = {}
        if node.name in saved and key.startswith("f_"):
            border = {"color": "darkorange", "penwidth": "3"}
        frame.node(key, node.name, fillcolor=color, style=style, **border)

    with dot.subgraph(name="cluster_forward") as frame:
        frame.attr(label="forward", fontname="sans-serif", color="black")
        for node in forward_nodes:
            box(frame, f"f_{node.name}", node)
    with dot.subgraph(name="cluster_backward") as frame:
        frame.attr(label="backward", fontname="sans-serif", color="black")
        for node in backward_nodes:
            if node.name not in saved:
                box(frame, f"b_{node.name}", node, dashed=node.name in recomputed)
    for node in forward_nodes:
        for source in node.all_input_nodes:
            dot.edge(f"f_{source.name}", f"f_{node.name}")
            edges.append((source.name, node.name))
    for node in backward_nodes:
        if node.op != "call_function":
            continue
        for source in node.all_input_nodes:
            crossing = source.name in saved
            dot.edge(
                f"{'f' if crossing else 'b'}_{source.name}",
                f"b_{node.name}",
                **({"color": "darkorange"} if crossing else {}),
            )
            edges.append((source.name if crossing else f"backward:{source.name}",
                          f"backward:{node.name}"))
    description = (
        f"Partitioned joint graph. forward: {', '.join(forward_names)}; saved (crossing the "
        f"cut, orange border): {', '.join(saved) or 'nothing'}; backward: "
        f"{', '.join(node.name for node in backward_nodes if node.name not in saved)}; "
        f"recomputed in the backward (dashed): {', '.join(recomputed) or 'nothing'}."
    )
    svg = dot.pipe(format="svg", encoding="utf-8")
    graph = Graph(svg, node_count=len(forward_nodes) + len(backward_nodes) - len(saved),
                  description=description)
    graph.edges, graph.saved, graph.recomputed = edges, saved, recomputed
    return graph
