"""The peak-memory meters give known answers on cases small enough to count."""

import pytest
import torch

from gradbook import live_bytes_peak, live_bytes_timeline, profiler_peak
from gradbook.memory import cpu_kernels, process_peak, profiled_op_names

FLOATS = 1000  # elements per tensor below: 4,000 bytes in float32
BYTES = FLOATS * 4


def test_one_new_tensor_is_its_size():
    assert live_bytes_peak(lambda: torch.empty(FLOATS)) == (BYTES, 0)


def test_what_existed_before_is_not_counted():
    x = torch.randn(FLOATS)
    assert live_bytes_peak(lambda: x.clone()) == (BYTES, 0)


def test_a_tensor_freed_before_the_next_does_not_add_up():
    def run():
        for _ in range(5):
            torch.ones(FLOATS)

    assert live_bytes_peak(run) == (BYTES, 0)


def test_tensors_alive_together_add_up():
    def run():
        a = torch.ones(FLOATS)
        b = a * 2
        c = b + a
        return a, b, c

    assert live_bytes_peak(run) == (3 * BYTES, 0)


def test_views_and_in_place_results_allocate_nothing():
    x = torch.randn(FLOATS)

    def run():
        y = x * 2  # one new block
        y.mul_(3)  # in place: same block
        y[:10].add_(1)  # a view: same block
        x.add_(1)  # in place on memory from before: not counted
        return y.view(10, 100), y[5:]

    assert live_bytes_peak(run) == (BYTES, 0)


def test_a_small_view_keeps_the_whole_block():
    def run():
        return torch.ones(FLOATS)[:1]  # 4 bytes seen, 4,000 held

    assert live_bytes_peak(run) == (BYTES, 0)


def test_memory_kept_after_run_is_reported():
    kept = []
    peak, still_live = live_bytes_peak(lambda: kept.append(torch.ones(10)))
    assert (peak, still_live) == (40, 40)
    kept.clear()


def test_backward_frees_what_forward_saved():
    x = torch.randn(FLOATS, requires_grad=True)

    def run():
        y = x.exp()  # saved by exp's backward: alive until backward
        y.sum().backward()  # the gradient (4,000) and a 4-byte sum

    peak, still_live = live_bytes_peak(run)
    # At the peak: exp's saved output, x's new gradient, the 4-byte sum and
    # the 4-byte seed gradient (ones) that backward starts from.
    assert peak == 2 * BYTES + 8
    # Only x.grad survives, created by an operation during run().
    assert still_live == BYTES
    x.grad = None


def test_an_int64_tensor_counts_eight_bytes_per_element():
    assert live_bytes_peak(lambda: torch.arange(FLOATS)) == (8 * FLOATS, 0)


def test_the_meter_refuses_what_it_cannot_call():
    with pytest.raises(TypeError, match="function to call"):
        live_bytes_peak(42)
    with pytest.raises(TypeError, match="function to call"):
        profiler_peak("x")


def test_the_profiler_sees_what_the_meter_sees(capfd):
    def run():
        a = torch.ones(FLOATS)
        b = a * 2
        return a + b

    assert profiler_peak(run) == live_bytes_peak(run)[0] == 3 * BYTES
    # Kineto's start and stop lines do not reach stderr.
    assert capfd.readouterr().err == ""


def test_the_profiler_also_sees_a_kernels_workspace():
    # An unfold inside a Python op is seen by both, but the workspace of a
    # convolution's backward only by the profiler: it can only be larger.
    x = torch.randn(8, 16, 20, 20, requires_grad=True)
    conv = torch.nn.Conv2d(16, 16, 3, bias=False)

    def run():
        conv(x).sum().backward()

    metered, _ = live_bytes_peak(run)
    assert profiler_peak(run) >= metered > 0


def test_a_storage_enlarged_in_place_counts_its_new_size():
    assert live_bytes_peak(lambda: torch.empty(0).resize_(FLOATS)) == (
        BYTES,
        0,
    )

    def into_too_small_out():
        out = torch.empty(0)
        torch.add(torch.ones(FLOATS), 1, out=out)  # out grows to FLOATS
        return out

    assert live_bytes_peak(into_too_small_out) == (2 * BYTES, 0)


def test_a_storage_from_before_counts_only_its_growth():
    held = [torch.ones(FLOATS)]  # 4,000 bytes from before the run
    peak, still_live = live_bytes_peak(lambda: held[0].resize_(3 * FLOATS))
    assert (peak, still_live) == (2 * BYTES, 2 * BYTES)
    held.clear()


def test_a_tensor_kept_on_ctx_is_still_live():
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(t):
            return t.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.kept = output.detach()  # not save_for_backward

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.kept

    t = torch.randn(FLOATS, requires_grad=True)
    graphs = []
    # Exp's output is dropped; its memory lives on through ctx, and the
    # 4-byte sum that holds the graph lives too.
    peak, still_live = live_bytes_peak(
        lambda: graphs.append(Exp.apply(t).sum())
    )
    assert still_live == BYTES + 4
    graphs.clear()


def test_outputs_sharing_a_new_storage_count_once():
    def run():
        return torch.ones(2 * FLOATS).chunk(2)

    assert live_bytes_peak(run) == (2 * BYTES, 0)


def test_the_timeline_lists_each_operation_with_live_bytes():
    def run():
        a = torch.ones(FLOATS)
        b = a * 2
        del a
        return b + 1

    timeline = live_bytes_timeline(run)
    assert [name for name, _, _ in timeline] == ["ones", "mul", "add"]
    assert [(before, after) for _, before, after in timeline] == [
        (0, BYTES),
        (BYTES, 2 * BYTES),
        (BYTES, 2 * BYTES),  # a was freed before the addition
    ]
    with pytest.raises(TypeError, match="function to call"):
        live_bytes_timeline(None)


def test_memory_from_before_freed_during_the_run(capfd):
    # Both count what the run creates: freeing a block from before does not
    # make room in their count (the profiler does not know its size).
    def run_freeing(held):
        def run():
            held.clear()  # frees 4,000 bytes that existed before
            return torch.ones(2 * FLOATS)  # then allocates 8,000

        return run

    assert live_bytes_peak(run_freeing([torch.ones(FLOATS)]))[0] == 2 * BYTES
    assert profiler_peak(run_freeing([torch.ones(FLOATS)])) == 2 * BYTES
    assert capfd.readouterr().err == ""  # the profiler's warning is silenced


def test_zero_tangents_and_meta_tensors_hold_no_memory():
    x, tangent = torch.randn(FLOATS), torch.randn(FLOATS)
    w = torch.randn(FLOATS)  # no tangent: forward mode gives it a zero one

    def run():
        return torch.func.jvp(lambda point: w * point, (x,), (tangent,))

    timeline = live_bytes_timeline(run)
    names = {name for name, _, _ in timeline}
    assert {"_efficientzerotensor", "to"} <= names  # the zero tangent's path
    for name, before, after in timeline:
        if name in ("_efficientzerotensor", "to"):  # ZeroTensor, meta copies
            assert before == after, name
    assert live_bytes_peak(lambda: torch.empty(FLOATS, device="meta")) == (0, 0)


BIG = 6 * 2**20  # float64 elements: 48 MiB, above the C library's mmap threshold


def test_the_process_high_water_mark_sees_large_blocks():
    def run():
        a = torch.ones(BIG, dtype=torch.float64)
        b = a * 2
        del a, b
        c = torch.ones(BIG, dtype=torch.float64)
        return c

    peak = process_peak(run)
    # within what the C library may keep in its heap for reuse
    assert abs(peak - 2 * BIG * 8) < 8 * 2**20


def test_the_meter_agrees_with_the_process_under_torch_func():
    x, w, v = (torch.randn(BIG, dtype=torch.float64) for _ in range(3))

    def hvp():
        def gradient_at(point):
            return torch.func.grad(lambda p: (w * p * p * p).sum())(point)

        return torch.func.jvp(gradient_at, (x,), (v,))[1]

    hvp()
    metered, _ = live_bytes_peak(hvp)
    assert abs(process_peak(hvp) - metered) < 8 * 2**20


def test_cpu_kernels_switches_onednn_off_and_back():
    before = torch.backends.mkldnn.enabled
    with cpu_kernels("native"):
        assert not torch.backends.mkldnn.enabled
    assert torch.backends.mkldnn.enabled == before
    with pytest.raises(ValueError, match="'onednn' or 'native'"):
        with cpu_kernels("cudnn"):
            pass


def test_profiled_op_names_lists_each_operation_once_in_order(capfd):
    def run():
        a = torch.ones(FLOATS)
        return (a + a) * (a + a)

    names = profiled_op_names(run)
    assert names.count("aten::add") == 1
    assert names.index("aten::ones") < names.index("aten::add")
    assert names.index("aten::add") < names.index("aten::mul")
    assert capfd.readouterr().err == ""
    with pytest.raises(TypeError, match="function to call"):
        profiled_op_names(None)
