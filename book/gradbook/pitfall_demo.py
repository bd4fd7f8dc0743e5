"""A key drawn inside an autograd drawing, so that the drawing reads without a paragraph.

``with_key(graph, kinds)`` returns a new Graph whose SVG has one row per kind of node or
line below the graph: a swatch in the colours ``draw_graph`` and ``outline_saved_leaves``
use, and a few words. The text alternative gets the same key.
"""

import html
import re

from gradbook.graphs import Graph

# kind: (what the swatch draws, the words beside it)
KINDS = {
    "output": ('<rect x="{x}" y="{y}" width="16" height="10" fill="#caff70" stroke="black"/>',
               "an output"),
    "leaf": ('<rect x="{x}" y="{y}" width="16" height="10" fill="lightblue" stroke="black"/>',
             "a leaf"),
    "saved leaf": ('<rect x="{x}" y="{y}" width="16" height="10" fill="lightblue" '
                   'stroke="darkorange" stroke-width="3"/>',
                   "a leaf the Function saved"),
    "saved tensor": ('<rect x="{x}" y="{y}" width="16" height="10" fill="orange" '
                     'stroke="black"/>',
                     "saved, not a leaf requiring grad"),
    # the same fill: an output without grad_fn that its node saved is drawn once, as saved
    "saved output": ('<rect x="{x}" y="{y}" width="16" height="10" fill="orange" '
                     'stroke="black"/>',
                     "an output without grad_fn, saved by its node"),
    "node": ('<rect x="{x}" y="{y}" width="16" height="10" fill="lightgrey" stroke="black"/>',
             "a backward node"),
    "saved line": ('<line x1="{x}" y1="{y5}" x2="{x16}" y2="{y5}" stroke="black"/>',
                   "line: saved by that node"),
    "arrow": ('<line x1="{x}" y1="{y5}" x2="{x12}" y2="{y5}" stroke="black"/>'
              '<polygon points="{x12},{y2} {x16},{y5} {x12},{y8}" fill="black"/>',
              "arrow: input to output"),
    # torchviz draws an output that is a view of another output with a dotted edge from
    # its base; the dash pattern is Graphviz's own for style=dotted
    "view": ('<line x1="{x}" y1="{y5}" x2="{x12}" y2="{y5}" stroke="black" '
             'stroke-dasharray="1,5"/>'
             '<polygon points="{x12},{y2} {x16},{y5} {x12},{y8}" fill="black"/>',
             "dotted arrow: a tensor to its view"),
}
ROW = 14  # points per row of the key
SIZE = re.compile(r'width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="([\d.]+) ([\d.]+) '
                  r'([\d.]+) ([\d.]+)"')


def with_key(graph, kinds):
    """A copy of ``graph`` (from ``draw_graph``) with a key of ``kinds`` drawn below it.

    ``kinds`` lists names from ``KINDS`` (``"output"``, ``"leaf"``, ``"saved leaf"``,
    ``"saved tensor"``, ``"saved output"``, ``"node"``, ``"saved line"``, ``"arrow"``,
    ``"view"``), in
    the order shown.
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"with_key expects a Graph from draw_graph, got "
                        f"{type(graph).__name__}: pass the drawing, not the tensor")
    if isinstance(kinds, str) or not kinds:
        raise ValueError("kinds must be a non-empty list of names, such as "
                         "['output', 'leaf']: one row of the key per name")
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise ValueError(f"no key entry {unknown[0]!r}: choose from {sorted(KINDS)}")
    match = SIZE.search(graph.svg)
    if match is None:
        raise ValueError("the drawing's SVG has no width, height and viewBox in points: "
                         "pass a Graph drawn by draw_graph")
    width, height = float(match.group(5)), float(match.group(6))
    words = [KINDS[kind][1] for kind in kinds]
    key_width = 30 + 5.6 * max(len(w) for w in words)  # 10 pt sans-serif, roughly
    new_width, new_height = max(width, key_width), height + ROW * len(kinds) + 6
    rows = [f'<rect x="0" y="{height}" width="{new_width}" height="{new_height - height}" '
            'fill="white"/>']
    for row, kind in enumerate(kinds):
        y = height + 4 + ROW * row
        x = 6
        swatch = KINDS[kind][0].format(x=x, y=y, x12=x + 12, x16=x + 16, y2=y + 2, y5=y + 5,
                                       y8=y + 8)
        rows.append(swatch + f'<text x="{x + 22}" y="{y + 9}" font-family="sans-serif" '
                    f'font-size="10">{html.escape(words[row])}</text>')
    size = (f'width="{new_width:g}pt" height="{new_height:g}pt"\n viewBox="0.00 0.00 '
            f'{new_width:.2f} {new_height:.2f}"')
    svg = SIZE.sub(size, graph.svg, count=1)
    end = svg.rindex("</svg>")
    svg = svg[:end] + '<g class="key">' + "".join(rows) + "</g>\n" + svg[end:]
    description = graph.description.rstrip(".") + ". Key: " + "; ".join(words) + "."
    return Graph(svg, graph.node_count, description)
