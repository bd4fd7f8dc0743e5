"""Routes through the book by goal (issue 23): one list, from which the site builds the
`{routes}` block of the intro (each step linked, with its reading time), a diagram of the parts
and the routes, and a line under each chapter's title naming its routes and what comes next.

A step is a whole chapter or one `## ` section of it; its reading time is computed from the
notebook with _ext/reading_time.py's model, so the minutes on the page are never typed.
"""
import json
import textwrap
from pathlib import Path

import graphviz
from docutils import nodes
from docutils.parsers.rst import Directive

import reading_time

ROUTES = [
    {
        "name": "How reverse mode works",
        "steps": [
            ("book/simple_grad_1_tape", None),
            ("book/simple_grad_2_known_zeros", None),
            ("book/simple_grad_3_gradients_of_gradients", None),
        ],
    },
    {
        "name": "A custom Function that survives double backward",
        "steps": [
            ("book/extending_autograd", "Anatomy of a Function"),
            ("book/extending_autograd", "The PyTorch 2 style: `setup_context`"),
            ("book/extending_autograd", "A Function that survives a gradient penalty"),
            ("book/double_backward", None),
            # The penalty's section reuses the x, w and v that this one defines.
            ("book/double_backward_at_work", "Hessian-vector products"),
            ("book/double_backward_at_work", "A gradient penalty"),
        ],
    },
    {
        "name": "Second order in practice",
        "after": "How reverse mode works",  # its first steps continue with Simple Grad
        "steps": [
            ("book/simple_grad_3_gradients_of_gradients", "A loss made of gradients"),
            ("book/double_backward_at_work", "Hessian-vector products"),
            ("book/double_backward_at_work", "What each costs"),
            ("book/double_backward_at_work", "A gradient penalty"),
            ("book/second_order_at_scale", "MAML: a gradient through a gradient step"),
            ("book/second_order_at_scale", "The curvature of a network"),
        ],
    },
]
PARTS = {
    "Part I: Simple Grad": [
        "book/simple_grad_1_tape", "book/simple_grad_2_known_zeros",
        "book/simple_grad_3_gradients_of_gradients", "book/simple_grad_4_aggregate_operators",
        "book/simple_grad_5_side_by_side", "book/what_a_compiler_sees",
        "book/compiled_backwards",
    ],
    "Part II: Custom autograd Functions": [
        "book/extending_autograd", "book/pitfalls", "book/double_backward", "book/custom_operators",
        "book/what_composes",
    ],
    "Part III: Going further": [
        "book/fused_conv_bn", "book/double_backward_at_work", "book/second_order_at_scale",
    ],
}
# Each route's line in the diagram: a colour dark enough on white, and a style that tells the
# routes apart without colour. The list of routes names them.
LINES = [("#1f6feb", "solid", "blue"), ("#b35900", "dashed", "orange"), ("#2e7d32", "dotted", "green")]


def cells_of(root, docname):
    return json.loads((Path(root) / f"{docname}.ipynb").read_text(encoding="utf-8"))["cells"]


def is_heading(cell, title=None):
    lines = "".join(cell.get("source", "")).splitlines() if cell["cell_type"] == "markdown" else []
    return any(line == f"## {title}" if title else line.startswith("## ") for line in lines)


def section_cells(cells, title):
    """The cells of the `## title` section: from its heading to the next `## ` heading."""
    start = next((i for i, cell in enumerate(cells) if is_heading(cell, title)), None)
    if start is None:
        raise ValueError(f"routes: no section '## {title}'")
    end = next((i for i in range(start + 1, len(cells)) if is_heading(cells[i])), len(cells))
    return cells[start:end]


def step_minutes(root, docname, section):
    cells = cells_of(root, docname)
    return reading_time.minutes(section_cells(cells, section) if section else cells)


def route_minutes(root, route):
    """The route's minutes as the intro prints them: the sum of its steps', each rounded."""
    return sum(round(step_minutes(root, docname, section)) for docname, section in route["steps"])


def page_title(root, docname):
    first = "".join(cells_of(root, docname)[0]["source"]).splitlines()[0]
    return first.removeprefix("# ")


def step_name(root, docname, section):
    title = page_title(root, docname)
    return f"{title}: {section.replace('`', '')}" if section else title


def link(app, fromdoc, docname, section, text):
    uri = app.builder.get_relative_uri(fromdoc, docname)
    if section:
        uri += "#" + nodes.make_id(section.replace("`", ""))
    return nodes.reference("", text, refuri=uri, internal=True)


class RoutesDirective(Directive):
    """The routes, each with its total and its steps' reading times, and the diagram."""

    def run(self):
        env = self.state.document.settings.env
        app, root = env.app, env.app.srcdir
        blocks = [nodes.raw("", diagram(root), format="html")]
        for route in ROUTES:
            minutes = round(route_minutes(root, route))
            heading = nodes.paragraph()
            _, style, colour = LINES[ROUTES.index(route)]
            heading += nodes.strong(text=route["name"])
            heading += nodes.Text(f" ({style} {colour} line): about {minutes} minutes")
            if "after" in route:
                heading += nodes.Text(", after ")
                heading += nodes.emphasis(text=route["after"])
            heading += nodes.Text(".")
            steps = nodes.enumerated_list()
            for docname, section in route["steps"]:
                item = nodes.paragraph()
                item += link(app, env.docname, docname, section, step_name(root, docname, section))
                item += nodes.Text(f" ({round(step_minutes(root, docname, section))} min)")
                steps += nodes.list_item("", item)
            blocks += [heading, steps]
        return blocks


def diagram(root):
    """An SVG of the three parts, their chapters, and each route as a coloured path."""
    # Parts side by side, each a column of its chapters, so that it fits the page's column.
    graph = graphviz.Digraph(graph_attr={"rankdir": "TB", "bgcolor": "white", "fontname": "Helvetica",
                                         "fontsize": "11", "nodesep": "0.3", "ranksep": "0.25"},
                             node_attr={"shape": "box", "style": "rounded", "fontname": "Helvetica",
                                        "fontsize": "10", "height": "0.3"})
    for index, (part, docnames) in enumerate(PARTS.items()):
        with graph.subgraph(name=f"cluster_{index}") as cluster:
            cluster.attr(label=part.replace(": ", "\n"), color="#888888")
            for docname in docnames:
                title = page_title(root, docname)
                cluster.node(docname, textwrap.fill(title, 22), tooltip=title)
            for first, second in zip(docnames, docnames[1:]):
                cluster.edge(first, second, style="invis")
    for route, (colour, style, _) in zip(ROUTES, LINES):
        stops = list(dict.fromkeys(docname for docname, _ in route["steps"]))
        for first, second in zip(stops, stops[1:]):
            graph.edge(first, second, color=colour, style=style, penwidth="2.5", constraint="false")
    legend = "; ".join(f"{route['name']}: {style} {name} line" for route, (_, style, name) in zip(ROUTES, LINES))
    svg = graph.pipe(format="svg").decode()
    svg = svg[svg.index("<svg"):]
    label = f"The book's three parts and their chapters, with three routes. {legend}."
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1)
    return f'<div class="routes-diagram">{svg}</div>'


def steps_here(route, docname):
    """('step 2' or 'steps 2-4', the last of them): where this chapter's steps fall in the
    route, counted from 1."""
    numbers = [index + 1 for index, (step_doc, _) in enumerate(route["steps"]) if step_doc == docname]
    if len(numbers) == 1:
        label = f"step {numbers[0]}"
    elif numbers == list(range(numbers[0], numbers[-1] + 1)):
        label = f"steps {numbers[0]}-{numbers[-1]}"
    else:
        label = "steps " + ", ".join(map(str, numbers))
    return label, numbers[-1]


def add_routes_line(app, doctree):
    docname = app.env.docname
    on = [route for route in ROUTES if any(step_doc == docname for step_doc, _ in route["steps"])]
    if not on:
        return
    line = nodes.paragraph(classes=["routes-line"])
    for number, route in enumerate(on):
        line += nodes.Text("On the route " if number == 0 else "; on ")
        routes_on_intro = app.builder.get_relative_uri(docname, "book/intro") + "#routes-by-goal"
        line += nodes.reference("", "", nodes.emphasis(text=route["name"]), refuri=routes_on_intro)
        where, last = steps_here(route, docname)
        line += nodes.Text(f" ({where} of {len(route['steps'])}")
        sections = [section.replace("`", "") for step_doc, section in route["steps"]
                    if step_doc == docname and section]
        if sections:  # only these sections of the chapter are on the route
            line += nodes.Text(": " + "; ".join(sections))
        if last < len(route["steps"]):
            next_doc, section = route["steps"][last]
            line += nodes.Text(", then ")
            line += link(app, docname, next_doc, section, step_name(app.srcdir, next_doc, section))
        line += nodes.Text(")")
    line += nodes.Text(".")
    next(iter(doctree.findall(nodes.section))).insert(1, line)


def setup(app):
    app.add_directive("routes", RoutesDirective)
    app.connect("doctree-read", add_routes_line)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
