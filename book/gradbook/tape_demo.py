"""Demonstrations for the tape chapter that run on a second copy of the engine.

The chapter ``simple_grad_1_tape`` defines Simple Grad in its own namespace.
These helpers run the same engine, as exported to ``gradbook.simple_grad``,
on that module's own tape: a chapter's tape, and the values it keeps, are
left untouched. Each helper resets the module's tape before and after.
"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from gradbook import simple_grad as sg


def _require_sizes(sizes, caller):
    sizes = tuple(sizes)
    if not sizes or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 2
        for n in sizes
    ):
        raise ValueError(
            f"{caller}: sizes must be integers >= 2, got {sizes!r}: "
            f"a product needs two inputs, e.g. {caller}((4, 16))."
        )
    return sizes


def _product_inputs(n):
    """n leaves x0 ... x(n-1) on the module's tape, float64 vectors of 3."""
    return [
        sg.Variable.constant(
            torch.full((3,), 1.0 + i / n, dtype=torch.float64), name=f"x{i}"
        )
        for i in range(n)
    ]


def _product_sum(xs):
    product = xs[0]
    for x in xs[1:]:
        product = product * x
    return product.sum()


def _each_product(sizes, caller):
    """For each n in ``sizes``, on a fresh quiet tape: n and the n inputs of
    ``(x0 * x1 * ... * x(n-1)).sum()``; the tape is reset after the last."""
    sizes = _require_sizes(sizes, caller)
    with sg.quiet_trace():
        for n in sizes:
            sg.reset_tape()
            yield n, _product_inputs(n)
        sg.reset_tape()


def product_counts(sizes=(4, 16, 64)):
    """For each n in ``sizes``: (n, forward entries, backward entries,
    gradients returned) of one ``grad`` of ``(x0 * x1 * ... * x(n-1)).sum()``
    with respect to all n inputs, each a float64 vector of 3 elements.
    """
    rows = []
    for n, xs in _each_product(sizes, "product_counts"):
        loss = _product_sum(xs)
        forward = len(sg.gradient_tape)
        gradients = sg.grad(loss, xs)
        returned = sum(g is not None for g in gradients)
        rows.append((n, forward, len(sg.gradient_tape) - forward, returned))
    return rows


class _ElementsWritten(TorchDispatchMode):
    """Counts the elements that ATen operations write while active; a view
    (``expand``) shares its input's memory and writes none."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if not func.is_view:
            self.count += sum(t.numel() for t in tree_flatten(result)[0]
                              if isinstance(t, torch.Tensor))
        return result


def product_elements(sizes=(4, 16, 64)):
    """For each n in ``sizes``: (n, elements the forward writes, elements the
    backward writes) for the program of ``product_counts``: its entries are
    not of one size (a product writes 3 elements, ``expand`` none)."""
    rows = []
    for n, xs in _each_product(sizes, "product_elements"):
        forward, backward = _ElementsWritten(), _ElementsWritten()
        with forward:
            loss = _product_sum(xs)
        with backward:
            sg.grad(loss, xs)
        rows.append((n, forward.count, backward.count))
    return rows


def _chapter_leaves():
    """The chapter's leaves ``a`` and ``b`` (float64, named), on a tape
    just reset."""
    sg.reset_tape()
    a = sg.Variable.constant(
        torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), name="a"
    )
    b = sg.Variable.constant(
        torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64), name="b"
    )
    return a, b


def walk_states():
    """The walk of ``grad`` over the tape of ``L0 = ((a + b) * b).sum()``,
    entry by entry, with the names the chapter's trace prints.

    Returns a list of (entry index, the entry as ``inputs -> outputs``, what
    the walk's ``dL_d`` holds once that entry's contributions are added: a
    dict from value name to the name of its gradient so far). A value read
    twice shows its sum as ``first + second``; the last row names the sum too
    (``v6 = v5 + v4``), as grad's trace does.
    """
    visits = []  # (index, entry, seed name or None, names returned)

    def watched(index, entry):
        def propagate(dL_doutputs):
            dL_dinputs = entry.propagate(dL_doutputs)
            seed = dL_doutputs[0].name if not visits else None
            returned = [None if g is None else g.name for g in dL_dinputs]
            visits.append((index, entry, seed, returned))
            return dL_dinputs

        return entry._replace(propagate=propagate)

    with sg.quiet_trace():
        a, b = _chapter_leaves()
        t = a + b
        r = t * b
        loss = r.sum(name="L0")
        forward = list(sg.gradient_tape)
        sg.gradient_tape[:] = [watched(i, e) for i, e in enumerate(forward)]
        results = [loss, r, t, a, b]
        final = dict(zip((x.name for x in results),
                         (g.name for g in sg.grad(loss, results))))
        sg.reset_tape()
    rows, held = [], {}
    for index, entry, seed, returned in visits:
        if seed is not None:
            held[entry.outputs[0]] = seed
        for name, gradient in zip(entry.inputs, returned):
            if gradient is not None:
                held[name] = (f"{held[name]} + {gradient}" if name in held
                              else gradient)
        arrow = f"{', '.join(entry.inputs)} -> {', '.join(entry.outputs)}"
        rows.append((index, arrow, dict(held)))
    last = rows[-1][2]
    for name, gradient in last.items():
        if "+" in gradient:
            last[name] = f"{final[name]} = {gradient}"
    return rows
