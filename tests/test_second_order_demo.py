import pytest

from gradbook.second_order_demo import draw_tape_phases


def test_draws_one_square_per_entry_and_outlines_the_marked():
    first, second = [object() for _ in range(3)], [object() for _ in range(5)]
    figure = draw_tape_phases(
        [("forward", first), ("grad", second)], marked=second[:2]
    )
    squares = figure.axes[0].patches
    assert len(squares) == 8
    outlined = [s for s in squares if s.get_linewidth() > 0]
    assert len(outlined) == 2


def test_refuses_marked_entries_outside_the_phases():
    with pytest.raises(ValueError, match="in no phase"):
        draw_tape_phases([("forward", [object()])], marked=[object()])


def test_refuses_too_many_phases():
    with pytest.raises(ValueError, match="1 to 4 phases"):
        draw_tape_phases([(str(i), []) for i in range(5)])


def test_meter_counts_held_bytes_until_the_backward_frees_them():
    import torch

    from gradbook.second_order_demo import held_while

    x = torch.randn(100, dtype=torch.float64, requires_grad=True)
    meter, loss = held_while(lambda: (x * x).sum())
    # mul saves x twice, one storage: counted once, 800 bytes
    assert meter.held_bytes() == 800
    loss.backward()
    assert meter.held_bytes() == 0


def test_meter_names_an_unknown_phase():
    import torch

    from gradbook.second_order_demo import held_while

    x = torch.randn(3, requires_grad=True)
    meter, _ = held_while(lambda: (x * x).sum())
    with pytest.raises(ValueError, match="no storage was saved in phase"):
        meter.held_bytes("forward")


def test_held_while_wants_a_function():
    from gradbook.second_order_demo import held_while

    with pytest.raises(TypeError, match="function of no arguments"):
        held_while(3)


def test_meter_counts_each_phase_apart():
    import torch

    from gradbook.second_order_demo import HeldSavedTensors

    x = torch.randn(100, dtype=torch.float64, requires_grad=True)
    y = torch.randn(50, dtype=torch.float64, requires_grad=True)
    meter = HeldSavedTensors()
    with torch.autograd.graph.saved_tensors_hooks(meter.pack, meter.unpack):
        meter.phase = "first"
        first = (x * x).sum()  # saves x: 800 bytes
        meter.phase = "second"
        second = (y * y).sum()  # saves y: 400 bytes
    assert meter.held_bytes("first") == 800
    assert meter.held_bytes("second") == 400
    assert meter.held_bytes() == 1200
    first.backward()
    assert meter.held_bytes("first") == 0
    assert meter.held_bytes("second") == 400
    del second


def test_refuses_a_row_of_no_squares():
    with pytest.raises(ValueError, match="per_row must be at least 1"):
        draw_tape_phases([("forward", [object()])], per_row=0)



def test_writes_each_name_that_fits_on_its_band_and_numbers_the_rows():
    long_phase = [object() for _ in range(12)]
    figure = draw_tape_phases(
        [("forward", long_phase), ("v", [object()]), ("grad", [object()] * 0)],
        per_row=10,
    )
    texts = [t.get_text() for t in figure.axes[0].texts]
    # "forward" fits on its 10 squares of row 1; the row starts are 1 and 11
    assert "forward" in texts and "1" in texts and "11" in texts
    # a one-square phase named "v" fits too; an empty phase has no label
    assert "v" in texts and "grad" not in texts
