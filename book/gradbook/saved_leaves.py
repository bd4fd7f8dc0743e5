"""One convention for a leaf that a custom Function saved: light blue, orange border.

torchviz fills every saved tensor orange, a leaf included; this helper (called by Extending,
Pitfalls and the once_differentiable page) keeps a leaf light blue and marks that it was
saved with a thick dark-orange border.
"""

from gradbook.graphs import Graph

ORANGE_FILL = '<polygon fill="orange" stroke="black"'
OUTLINED = '<polygon fill="lightblue" stroke="darkorange" stroke-width="4"'


def outline_saved_leaves(graph, count):
    """Redraw the ``count`` saved leaves of ``graph`` (from ``draw_graph``) as outlined.

    ``count`` is how many orange-filled nodes the drawing holds, all of them saved leaves;
    a different number raises, since an orange intermediate would then turn light blue.
    Returns the same Graph, changed in place.
    """
    if not isinstance(graph, Graph):
        raise TypeError(
            f"outline_saved_leaves expects a Graph from draw_graph, got "
            f"{type(graph).__name__}: pass the drawing, not the tensor"
        )
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(
            f"count must be the number of saved leaves, an int >= 0; got {count!r}"
        )
    found = graph.svg.count(ORANGE_FILL)
    if found != count:
        raise ValueError(
            f"the drawing has {found} orange nodes, not {count}: pass the number "
            "of saved leaves, and draw only graphs whose orange nodes are all leaves"
        )
    graph.svg = graph.svg.replace(ORANGE_FILL, OUTLINED)
    return graph


def outline_saved_leaf(graph, label):
    """Redraw the one orange node labelled ``label`` as outlined; other orange nodes stay.

    For a drawing that also holds saved tensors that are not leaves (a saved incoming
    gradient, say), where ``outline_saved_leaves`` would recolour them too.
    Returns the same Graph, changed in place.
    """
    if not isinstance(graph, Graph):
        raise TypeError(
            f"outline_saved_leaf expects a Graph from draw_graph, got "
            f"{type(graph).__name__}: pass the drawing, not the tensor"
        )
    if not isinstance(label, str):
        raise TypeError(f"label must be the node's label, a str; got {label!r}")
    starts = []  # where each orange node labelled `label` begins
    start = graph.svg.find(ORANGE_FILL)
    while start != -1:
        node_end = graph.svg.find("</g>", start)
        if f">{label}</text>" in graph.svg[start:node_end]:
            starts.append(start)
        start = graph.svg.find(ORANGE_FILL, start + 1)
    if len(starts) != 1:
        raise ValueError(
            f"the drawing has {len(starts)} orange nodes labelled {label!r}, not 1: "
            "pass the label of one saved leaf as the drawing shows it"
        )
    (start,) = starts
    graph.svg = (graph.svg[:start] + OUTLINED
                 + graph.svg[start + len(ORANGE_FILL):])
    return graph
