"""Simple Grad agrees with torch.autograd on random programs, to third order, in float64.

Hypothesis writes programs over the engine's five operators (mul, add, exp, sum, expand) with
one to four inputs, vectors and scalars, values used more than once, and losses that some inputs
never reach. Each program runs twice, once on Variables and once on float64 tensors that
require grad (the operators are spelled the same on both). Each order's loss is built the same
way from the previous order's gradients, and every gradient is compared: a value within 1e-10,
and None exactly where torch.autograd.grad(..., allow_unused=True) says None.
"""
import collections

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbook.simple_grad import Variable, grad, quiet_trace, reset_tape

TOLERANCE = 1e-10
PROGRAMS_PER_RUN = 1500
ORDERS = 3

# A program: inputs (each a vector of one shared shape, or a scalar), then steps that each
# append one value: ("mul", i, j), ("add", i, j), ("exp", i), ("sum", i) or ("expand", i), where
# i and j index the values so far; the loss is the sum of value `loss`. At most EXPS_PER_PROGRAM
# exps, so that exp of exp of a product cannot overflow float64 by the third order.
EXPS_PER_PROGRAM = 2


@st.composite
def programs(draw):
    shape = draw(st.sampled_from([(1,), (3,), (2, 3)]))
    kinds = list(draw(st.lists(st.sampled_from(["vector", "scalar"]), min_size=1, max_size=4)))
    n_inputs = len(kinds)
    steps = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        operator = draw(st.sampled_from(["mul", "add", "exp", "sum", "expand"]))
        i = draw(st.integers(min_value=0, max_value=len(kinds) - 1))
        if operator == "exp":
            if sum(step[0] == "exp" for step in steps) < EXPS_PER_PROGRAM:
                steps.append(("exp", i))
                kinds.append(kinds[i])
        elif operator in ("mul", "add"):
            same_kind = [j for j, kind in enumerate(kinds) if kind == kinds[i]]
            steps.append((operator, i, draw(st.sampled_from(same_kind))))
            kinds.append(kinds[i])
        elif operator == "sum":
            steps.append(("sum", i))
            kinds.append("scalar")
        elif kinds[i] == "scalar":  # expand takes scalars only
            steps.append(("expand", i))
            kinds.append("vector")
    # often the last value, which tends to depend on more inputs; otherwise any value
    last = len(kinds) - 1
    loss = draw(st.one_of(st.just(last), st.integers(min_value=0, max_value=last)))
    seed = draw(st.integers(min_value=0, max_value=2**31 - 1))
    return shape, kinds[:n_inputs], steps, loss, seed


def run(program, values):
    """The program's loss; `values` are its inputs, Variables or tensors alike."""
    shape, _, steps, loss, _ = program
    values = list(values)
    for step in steps:
        x = values[step[1]]
        if step[0] == "mul":
            values.append(x * values[step[2]])
        elif step[0] == "add":
            values.append(x + values[step[2]])
        elif step[0] == "exp":
            values.append(x.exp())
        elif step[0] == "sum":
            values.append(x.sum())
        else:
            values.append(x.expand(shape))
    return values[loss].sum()


def next_loss(gradients, inputs):
    """A scalar built from one order's gradients, to differentiate for the next order; None
    when every gradient is a known zero. It mixes in the inputs so no order is trivially
    constant."""
    terms = [(g * (g + x)).sum() for g, x in zip(gradients, inputs) if g is not None]
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def input_values(program):
    shape, kinds, _, _, seed = program
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.rand(shape if kind == "vector" else (), generator=generator, dtype=torch.float64)
        * 2
        - 1
        for kind in kinds
    ]


def engine_gradients(program):
    """Gradients of each order from Simple Grad, as tensors (None stays None)."""
    reset_tape()
    with quiet_trace():
        inputs = [
            Variable.constant(value, name=f"x{i}") for i, value in enumerate(input_values(program))
        ]
        loss, orders = run(program, inputs), []
        for _ in range(ORDERS):
            gradients = grad(loss, inputs)
            orders.append([None if g is None else g.value for g in gradients])
            loss = next_loss(gradients, inputs)
            if loss is None:
                break
    return orders


def torch_gradients(program):
    inputs = [value.requires_grad_() for value in input_values(program)]
    loss, orders = run(program, inputs), []
    for _ in range(ORDERS):
        if loss.requires_grad:
            gradients = torch.autograd.grad(loss, inputs, allow_unused=True, create_graph=True)
        else:  # the loss is a constant: no input reaches it
            gradients = [None] * len(inputs)
        orders.append([None if g is None else g.detach() for g in gradients])
        loss = next_loss(gradients, inputs)
        if loss is None:
            break
    return orders


def assert_same_gradients(ours, theirs):
    assert len(ours) == len(theirs), "a different number of orders had a non-zero gradient"
    for order, (engine_order, torch_order) in enumerate(zip(ours, theirs), start=1):
        for position, (g, expected) in enumerate(zip(engine_order, torch_order)):
            where = f"order {order}, input x{position}"
            assert (g is None) == (expected is None), (
                f"{where}: engine gave {'None' if g is None else 'a tensor'}, "
                f"torch gave {'None' if expected is None else 'a tensor'}"
            )
            if g is not None:
                torch.testing.assert_close(g, expected, atol=TOLERANCE, rtol=TOLERANCE, msg=where)


STATISTICS = collections.Counter()


# derandomize: the same programs on every run and machine; no database: nothing written to disk
@settings(max_examples=PROGRAMS_PER_RUN, deadline=None, derandomize=True, database=None)
@given(programs())
def check_random_programs(program):
    ours, theirs = engine_gradients(program), torch_gradients(program)
    assert_same_gradients(ours, theirs)
    STATISTICS["programs"] += 1
    STATISTICS["programs with exp"] += any(step[0] == "exp" for step in program[2])
    for order, gradients in enumerate(ours, start=1):
        STATISTICS[f"order {order}: gradients"] += len(gradients)
        STATISTICS[f"order {order}: None"] += sum(g is None for g in gradients)


def test_gradients_of_every_order_match_torch_on_random_programs():
    check_random_programs()
    # and the programs were what this file claims: many, with unreached inputs at every order
    assert STATISTICS["programs"] >= PROGRAMS_PER_RUN
    assert STATISTICS["programs with exp"] > PROGRAMS_PER_RUN // 10, "exp was hardly drawn"
    for order in range(1, ORDERS + 1):
        assert STATISTICS[f"order {order}: gradients"] > STATISTICS[f"order {order}: None"] > 0
    print("\n" + ", ".join(f"{key}: {value}" for key, value in sorted(STATISTICS.items())))
