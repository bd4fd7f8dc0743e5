"""Which rules a ``grad`` call runs, and which rule recorded each new entry.

Gradients of gradients asks of its second ``grad`` call: how often did the
rule of each entry already on the tape run, and which rule wrote each entry
the call appends? The answer needs every ``propagate`` wrapped for the
duration of the call; this module does it with tape_tools' helpers, so that
the chapter shows the table, not the plumbing.
"""

from collections import Counter

from .tape_tools import PropagateCalls, rules_that_recorded


def counting_rules(tape, run):
    """Run ``run()`` with every rule on ``tape`` counting its runs.

    Returns ``(what run() returned, runs, recorded_by)``: ``runs`` maps the
    position of each entry that was on the tape before the call to how often
    its ``propagate`` ran (a ``Counter``, so 0 for a rule that did not run);
    ``recorded_by`` maps the position of each entry the call appended to the
    position of the rule that recorded it, or to ``None`` when ``grad`` itself
    recorded it (the sum of two contributions). The rules compute what they
    computed, and the tape holds them unwrapped again afterwards.
    """
    if not isinstance(tape, list):
        raise TypeError(
            "counting_rules: pass the tape itself (gradient_tape), not a "
            f"{type(tape).__name__}."
        )
    if not callable(run):
        raise TypeError(
            "counting_rules: pass a function to run, e.g. "
            "lambda: grad(L1, [a, b]), not its result."
        )
    calls = PropagateCalls()  # counts each rule's runs, under one label
    unwrapped = list(tape)
    try:
        with calls.counting(tape, "run"):
            result, recorded_by = rules_that_recorded(tape, run)
    finally:
        tape[:len(unwrapped)] = unwrapped  # PropagateCalls leaves its wrappers
    runs = Counter({i: calls[i, "run"] for i in range(len(unwrapped))})
    return result, runs, recorded_by
