"""Watch PyTorch call a custom autograd Function's methods, and draw what it saw.

``record_calls`` runs a Function once forward and once backward through a subclass whose
methods note each call (the method, whether grad mode was on, what it received, what it saved
or returned) before handing over to the Function's own. ``draw_calls`` draws that record: the
calls made during ``apply`` on the top row, the calls made during backward below, and ``ctx``
between them, holding what the forward side saved for the backward side.
"""
from dataclasses import dataclass, field

import torch

from .graphs import Graph, _require_dot


@dataclass
class Call:
    """One call PyTorch made to a method of the Function, in the order it made them."""

    method: str  # "forward", "setup_context" or "backward"
    grad_enabled: bool  # grad mode while the method ran
    received: list  # names of the arguments, "ctx" first where PyTorch passed it
    saved: list = field(default_factory=list)  # names passed to ctx.save_for_backward
    attributes: list = field(default_factory=list)  # names set on ctx as plain attributes
    returned: list = field(default_factory=list)  # for backward: one name or "None" per input


def record_calls(function_class, inputs, create_graph=False):
    """The calls PyTorch makes to ``function_class``'s methods for one forward and backward.

    ``inputs`` maps a name to each argument of ``apply``, in order (``{"x": x, "w": w}``); at
    least one must be a floating-point tensor that requires grad. The backward is that of the
    sum of the first output, with ``torch.autograd.grad`` and the given ``create_graph`` (grad
    mode inside ``backward`` follows it); the ``.grad`` of the inputs is left as it was. A tensor saved for backward is named after the input or output it is, or
    called an intermediate.
    """
    if not (isinstance(function_class, type) and issubclass(function_class, torch.autograd.Function)):
        raise TypeError(
            "record_calls: pass the Function class itself (a subclass of "
            f"torch.autograd.Function), not {type(function_class).__name__}."
        )
    if not isinstance(inputs, dict) or not all(isinstance(name, str) for name in inputs):
        raise TypeError(
            "record_calls: pass the arguments of apply as a dict from a name to each, in order, "
            "e.g. {'x': x, 'w': w}."
        )
    if not isinstance(create_graph, bool):
        raise TypeError(f"record_calls: create_graph must be True or False, got {create_graph!r}.")
    tensors = [v for v in inputs.values() if isinstance(v, torch.Tensor)]
    if not any(t.requires_grad and t.is_floating_point() for t in tensors):
        raise ValueError(
            "record_calls: no input is a floating-point tensor that requires grad, so backward "
            "would never run. Create one with requires_grad=True."
        )
    split_style = function_class.setup_context is not torch.autograd.Function.setup_context
    calls = []
    outputs = []

    def name_of(value):
        for name, candidate in inputs.items():
            if value is candidate:
                return name
        if any(value is output for output in outputs):
            return "output"
        return "an intermediate" if isinstance(value, torch.Tensor) else repr(value)

    def note_ctx(call, ctx, before):
        call.saved = [name_of(t) for t in getattr(ctx, "to_save", ()) or ()]
        call.attributes = sorted(set(vars(ctx)) - before - {"to_save"})

    class Recorded(function_class):
        if split_style:
            @staticmethod
            def forward(*args, **kwargs):
                calls.append(Call("forward", torch.is_grad_enabled(), list(inputs)))
                return function_class.forward(*args, **kwargs)

            @staticmethod
            def setup_context(ctx, inputs_, output):
                outputs.extend(output if isinstance(output, (tuple, list)) else (output,))
                call = Call("setup_context", torch.is_grad_enabled(), ["ctx", "inputs", "output"])
                before = set(vars(ctx))
                function_class.setup_context(ctx, inputs_, output)
                note_ctx(call, ctx, before)
                calls.append(call)
        else:
            @staticmethod
            def forward(ctx, *args, **kwargs):
                call = Call("forward", torch.is_grad_enabled(), ["ctx", *inputs])
                before = set(vars(ctx))
                output = function_class.forward(ctx, *args, **kwargs)
                outputs.extend(output if isinstance(output, (tuple, list)) else (output,))
                note_ctx(call, ctx, before)
                calls.append(call)
                return output

        @staticmethod
        def backward(ctx, *grad_outputs):
            call = Call("backward", torch.is_grad_enabled(), ["ctx", "grad_output"])
            grads = function_class.backward(ctx, *grad_outputs)
            grads = grads if isinstance(grads, tuple) else (grads,)
            call.returned = ["None" if g is None else f"grad_{name}"
                             for g, name in zip(grads, inputs)]
            calls.append(call)
            return grads

    Recorded.__name__ = function_class.__name__
    output = Recorded.apply(*inputs.values())
    first = output[0] if isinstance(output, (tuple, list)) else output
    wanted = [t for t in tensors if t.requires_grad]
    torch.autograd.grad(first.sum(), wanted, allow_unused=True, create_graph=create_graph)
    return calls


def draw_calls(calls, title="apply"):
    """Draw ``record_calls``'s record, one call under the other: the forward side, ctx, then
    backward, called from the side by the backward pass.

    ``title`` names the call that starts it all, such as ``"LinearFunction2.apply"``.
    Each call is a grey box with its signature and whether grad mode was on; ``ctx`` is an
    orange box listing what was passed to ``save_for_backward`` and what was set on it as a
    plain attribute, with an arrow from the method that filled it to ``backward``, which reads
    it. The returned Graph has ``calls`` (the record) and a text description.
    """
    if not isinstance(calls, list) or not calls or not all(isinstance(c, Call) for c in calls):
        raise TypeError("draw_calls: pass the list that record_calls returns.")
    if [c.method for c in calls].count("backward") != 1:
        raise ValueError("draw_calls: the record must hold exactly one call to backward.")
    if not isinstance(title, str):
        raise TypeError(f"draw_calls: title must be a string, got {title!r}.")
    _require_dot()
    import graphviz  # installed with torchviz

    dot = graphviz.Digraph(
        graph_attr={"bgcolor": "white", "nodesep": "0.3", "ranksep": "0.35"},
        node_attr={"shape": "box", "style": "filled", "fillcolor": "lightgrey",
                   "fontname": "monospace", "fontsize": "11"},
        edge_attr={"arrowsize": "0.6", "fontname": "sans-serif", "fontsize": "10"},
    )
    forward_side = [c for c in calls if c.method != "backward"]
    (backward_call,) = [c for c in calls if c.method == "backward"]
    filler = next(c for c in forward_side if c.saved or c.attributes or c.method == "setup_context")

    def label(call):
        mode = "grad mode on" if call.grad_enabled else "grad mode off"
        if call.method == "backward":  # the run decides: grad mode in backward = create_graph
            mode += "\\n(autograd.grad:\\n= create_graph)"  # torch.func.grad: on
        return f"{call.method}({', '.join(call.received)})\\n{mode}"

    # one column, top to bottom in the order of the calls: narrow enough for a phone
    arguments = [name for name in forward_side[0].received if name != "ctx"]
    dot.node("apply", f"{title}({', '.join(arguments)})", fillcolor="white")
    for index, call in enumerate(forward_side):
        dot.node(f"f{index}", label(call))
    dot.edge("apply", "f0")
    for index in range(1, len(forward_side)):
        dot.edge(f"f{index - 1}", f"f{index}", label="output")
    kept = []
    if filler.saved:
        kept.append("saved: " + ", ".join(filler.saved))
    if filler.attributes:
        kept.append("attributes: " + ", ".join(filler.attributes))
    dot.node("ctx", "ctx\\n" + "\\n".join(kept or ["nothing"]), fillcolor="orange")
    dot.edge(f"f{forward_side.index(filler)}", "ctx", label="fills")
    returned = ", ".join(backward_call.returned)
    with dot.subgraph() as row:  # the backward pass calls backward from the side
        row.attr(rank="same")
        row.node("loss", "the backward\\npass", fillcolor="white")
        row.node("b", label(backward_call))
    dot.node("grads", f"returns\\n{returned}", fillcolor="darkolivegreen1")
    dot.edge("loss", "b")
    dot.edge("ctx", "b", label="read")
    dot.edge("b", "grads")
    description = (
        "Calls to a Function's methods. During apply: "
        + ", then ".join(f"{c.method} (grad mode {'on' if c.grad_enabled else 'off'})"
                         for c in forward_side)
        + f"; {filler.method} fills ctx ({'; '.join(kept) or 'nothing'}). During backward: "
        f"backward (grad mode {'on' if backward_call.grad_enabled else 'off'}) reads ctx and "
        f"returns {returned}."
    )
    svg = dot.pipe(format="svg", encoding="utf-8")
    graph = Graph(svg, node_count=len(calls) + 4, description=description)
    graph.calls = calls
    return graph
