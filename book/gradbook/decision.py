"""Draw a yes/no question and the cases that fell on each side of it, one box per answer.

Compiled backwards uses it for its table of routes: is the input behind the guard node? Yes:
the second derivative raises; no: it is silently missing. The cases in the boxes are the
routes the chapter ran, so the drawing shows data, not a claim typed into it.
"""
import graphviz

from .graphs import Graph, _require_dot


def draw_decision(question, answers):
    """A question at the top, an arrow per answer, and a box per answer listing its cases.

    ``question`` is a non-empty string (a newline in it breaks the line). ``answers`` maps each
    answer's label (such as ``"yes"``) to a pair (outcome, cases): the outcome names what
    happens (``"raises"``), the cases (a non-empty list of strings) are what was seen to
    fall there. Two or three answers, drawn left to right in the dict's order.
    """
    if not isinstance(question, str) or not question.strip():
        raise TypeError(f"draw_decision: question must be a non-empty string, got {question!r}.")
    if not isinstance(answers, dict) or not 2 <= len(answers) <= 3:
        raise ValueError(
            "draw_decision: answers must be a dict of 2 or 3 answers, "
            "{label: (outcome, [case, ...])}, got "
            f"{answers!r}."
        )
    for label, value in answers.items():
        if not isinstance(label, str) or not label:
            raise TypeError(f"draw_decision: an answer's label must be a non-empty string, got {label!r}.")
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)):
            raise TypeError(
                f"draw_decision: answer {label!r} must be a pair (outcome, [case, ...]), "
                f"got {value!r}."
            )
        cases = value[1]
        if (not isinstance(cases, (list, tuple)) or not cases
                or not all(isinstance(case, str) for case in cases)):
            raise TypeError(
                f"draw_decision: the cases of answer {label!r} must be a non-empty list of "
                f"strings (what fell there), got {cases!r}."
            )
    _require_dot()

    dot = graphviz.Digraph(
        graph_attr={"rankdir": "TB", "bgcolor": "white", "nodesep": "0.15", "ranksep": "0.3"},
        node_attr={"fontsize": "12", "shape": "box", "style": "rounded,filled",
                   "fillcolor": "white", "margin": "0.1,0.05"},
        edge_attr={"fontsize": "12"},
    )
    dot.node("question", question)
    sentences = [f"Decision: {' '.join(question.split())}"]  # then one per answer
    for index, (label, (outcome, cases)) in enumerate(answers.items()):
        # left-aligned lines (\l): the outcome, then one case per line
        text = outcome + "\\l" + "".join(f"  {case}\\l" for case in cases)
        dot.node(f"answer{index}", text, fillcolor="lightgrey")
        dot.edge("question", f"answer{index}", label=f" {label}")
        sentences.append(f"{label}: {outcome} ({'; '.join(cases)}).")
    svg = dot.pipe(format="svg", encoding="utf-8")
    graph = Graph(svg, node_count=1 + len(answers), description=" ".join(sentences))
    graph.answers = {label: (outcome, list(cases)) for label, (outcome, cases) in answers.items()}
    return graph
