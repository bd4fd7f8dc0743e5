"""What each backward of Aggregate operators records: entries, and the elements they write.

``two_orders`` runs two backwards of one small program (``L0`` and ``L1``). The chapter asks
how much each backward records; these helpers count it, so that the chapter shows only the
call and its table. An entry's outputs are counted by their elements, a view (what
``expand`` makes) as none, since it writes no new element.
"""
import contextlib

import torch

from . import simple_grad
from .simple_grad import Variable, gradient_tape, quiet_trace
from .two_orders import entries_per_backward, two_orders


@contextlib.contextmanager
def sizes_of_values_made():
    """name -> elements of each Variable made in the block; 0 for a view."""
    sizes, plain_init = {}, Variable.__init__

    def recording_init(self, *args, **kwargs):
        plain_init(self, *args, **kwargs)
        sizes[self.name] = 0 if self.value._is_view() else self.value.numel()

    Variable.__init__ = recording_init
    try:
        yield sizes
    finally:
        Variable.__init__ = plain_init


def elements_per_backward(function, a_value, b_value, *, reads_output=False):
    """[elements the first backward's entries write, the second's] (views count 0)."""
    written = []

    def counting_grad(L, results):
        start = len(gradient_tape)
        gradients = simple_grad.grad(L, results)
        written.append(sum(sizes[name] for entry in gradient_tape[start:]
                           for name in entry.outputs))
        return gradients

    with sizes_of_values_made() as sizes, quiet_trace():
        two_orders(function, a_value, b_value, gradient=counting_grad,
                   reads_output=reads_output)
    return written


def print_counts(functions, a_value, b_value, *, reads_output=False):
    """Print, per function, the entries each backward records and the elements they write."""
    if callable(functions) or not all(map(callable, functions)):
        raise TypeError(
            "print_counts: pass a list of the functions of (a, b) to compare, "
            "such as [simple, fused_recompute], not "
            f"{type(functions).__name__}."
        )
    for name, value in (("a_value", a_value), ("b_value", b_value)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"print_counts: {name} is the tensor a program starts from, "
                f"not a {type(value).__name__}; pass a_value, b_value."
            )
    print(f"  {'backward 1, 2:':16} {'entries':8} elements")
    for f in functions:
        entries = entries_per_backward(f, a_value, b_value,
                                       reads_output=reads_output)
        written = elements_per_backward(f, a_value, b_value,
                                        reads_output=reads_output)
        print(f"  {f.__name__:16} {str(entries):8} {written}")
