"""Helpers of the double-backward chapters: Simple Grad's tape drawn by
phase, and a meter of the bytes that saved tensors hold."""

import weakref

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Patch, Rectangle

PHASE_COLOURS = ("#bdbdbd", "#f2c14e", "#9ecae1", "#c2b3e0")


def draw_tape_phases(phases, marked=(), per_row=20):
    """Draw a tape as coloured bands, one square per entry.

    phases: a list of (name, entries) in tape order, at most four;
    marked: entries (the same objects) to outline in black, e.g. the
    second grad's entries that read a value the first grad made.
    Each phase's name is written on its band where it fits, each row
    starts with its first entry's number (from 1).
    Returns the matplotlib Figure.
    """
    phases = list(phases)
    if not 1 <= len(phases) <= len(PHASE_COLOURS):
        raise ValueError(
            f"draw_tape_phases takes 1 to {len(PHASE_COLOURS)} phases, got "
            f"{len(phases)}: pass a list of (name, entries) pairs"
        )
    if per_row < 1:
        raise ValueError(f"per_row must be at least 1, got {per_row}")
    marked_ids = {id(entry) for entry in marked}
    squares = []  # (colour, is marked)
    all_ids = set()
    for (_, entries), colour in zip(phases, PHASE_COLOURS):
        for entry in entries:
            squares.append((colour, id(entry) in marked_ids))
            all_ids.add(id(entry))
    if not marked_ids <= all_ids:
        raise ValueError(
            "draw_tape_phases: some marked entries are in no phase; pass "
            "entries taken from the phases' own lists"
        )
    rows = max(1, -(-len(squares) // per_row))
    # squares of about 0.4 inch and an 11-point legend: readable
    # in the text column at a laptop's width and, scaled down, at a phone's
    figure, axes = plt.subplots(figsize=(per_row * 0.42, 1.0 + rows * 0.5))
    for index, (colour, is_marked) in enumerate(squares):
        row, column = divmod(index, per_row)
        axes.add_patch(
            Rectangle(
                (column, -row), 0.9, 0.9, facecolor=colour,
                edgecolor="black" if is_marked else "none",
                linewidth=2.5 if is_marked else 0,
            )
        )
    # labels on the drawing itself: each phase's name on its longest run
    # of squares in one row (where the name fits), each row's first entry
    # number at its left, and the reading order on top
    start = 0
    for name, entries in phases:
        runs = {}  # row -> squares of this phase in that row
        for index in range(start, start + len(entries)):
            runs.setdefault(index // per_row, []).append(index % per_row)
        start += len(entries)
        if not runs:
            continue
        row, columns = max(runs.items(), key=lambda item: len(item[1]))
        if len(columns) * 0.9 >= 0.55 * len(name):  # room for the name
            axes.text((columns[0] + columns[-1] + 0.9) / 2, -row + 0.45, name,
                      ha="center", va="center", fontsize=10)
    for row in range(rows):
        axes.text(-0.3, -row + 0.45, str(row * per_row + 1), ha="right",
                  va="center", fontsize=10)
    axes.annotate("", xy=(per_row - 0.1, 1.3), xytext=(0, 1.3),
                  arrowprops={"arrowstyle": "->", "linewidth": 1.2})
    axes.text(per_row / 2, 1.45, "tape order: left to right, row by row",
              ha="center", va="bottom", fontsize=10)
    axes.set_xlim(-1.4, per_row)
    axes.set_ylim(-rows + 0.8, 2.2)
    axes.set_aspect("equal")
    axes.axis("off")
    handles = [
        Patch(facecolor=colour, label=f"{name} ({len(entries)})")
        for (name, entries), colour in zip(phases, PHASE_COLOURS)
    ]
    if marked_ids:
        handles.append(
            Patch(facecolor="white", edgecolor="black", linewidth=2.0,
                  label=f"reads a first-grad value ({len(marked_ids)})")
        )
    axes.legend(handles=handles, loc="upper center", ncol=2, frameon=False,
                bbox_to_anchor=(0.5, 0.0), fontsize=11)
    return figure


class HeldSavedTensors:
    """Bytes of the storages that saved tensors still hold, each once.

    Use its pack and unpack as torch.autograd.graph.saved_tensors_hooks;
    set .phase to label the storages saved from then on. It sees only
    tensors saved for backward through the hooks: a Python number an
    operation wraps into a tensor is saved without calling them.
    """

    class Saved:
        __slots__ = ("tensor", "__weakref__")

        def __init__(self, tensor):
            self.tensor = tensor

    def __init__(self):
        self.holders = {}  # storage address -> number of live saved tensors
        self.sizes = {}  # storage address -> bytes
        self.phase = None  # a label the caller may set
        self.phases = {}  # storage address -> phase when first saved

    def pack(self, tensor):
        storage = tensor.untyped_storage()
        key = storage.data_ptr()  # a key only, never printed
        if self.holders.get(key, 0) == 0:
            self.phases[key] = self.phase
        self.holders[key] = self.holders.get(key, 0) + 1
        self.sizes[key] = storage.nbytes()
        saved = self.Saved(tensor)
        weakref.finalize(saved, self.release, key)
        return saved

    def release(self, key):
        self.holders[key] -= 1

    @staticmethod
    def unpack(saved):
        return saved.tensor

    def held_bytes(self, phase=None):
        if phase is not None and phase not in self.phases.values():
            known = sorted(set(map(str, self.phases.values())))
            raise ValueError(
                f"held_bytes: no storage was saved in phase {phase!r}; "
                f"the phases seen are {known}. Set .phase before the "
                "operations, or pass phase=None for all of them"
            )
        return sum(
            self.sizes[k]
            for k, n in self.holders.items()
            if n > 0 and phase in (None, self.phases[k])
        )


def held_while(run):
    """Run run() under a HeldSavedTensors meter; return it and the result."""
    if not callable(run):
        raise TypeError(
            f"held_while takes a function of no arguments, got {run!r:.60}; "
            "wrap the computation in a lambda"
        )
    meter = HeldSavedTensors()
    with torch.autograd.graph.saved_tensors_hooks(meter.pack, meter.unpack):
        result = run()
    return meter, result
