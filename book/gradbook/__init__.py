"""The small module the chapters share: deterministic autograd graphs and gradient checks."""
from ._quiet_torch import load_forward_mode_decompositions_quietly
from .checks import check_gradients, first_line_of_error
from .diagnose import find_problems
from .graphs import (
    Graph,
    GraphvizMissingError,
    draw_graph,
    draw_partition,
    draw_tape,
)
from .memory import (
    cuda_peak,
    format_batch_size,
    format_peak,
    live_bytes_peak,
    live_bytes_timeline,
    profiler_peak,
)
from .tape_tools import (
    PropagateCalls,
    backward_nodes_run,
    bytes_kept,
    bytes_kept_by_tape,
    captured_by,
    nodes_run_by,
    operation_counts,
)
from .timing import compare_times, cpu_name, format_ratio, format_time, median_time

load_forward_mode_decompositions_quietly()

__all__ = [
    "Graph",
    "GraphvizMissingError",
    "PropagateCalls",
    "backward_nodes_run",
    "bytes_kept",
    "bytes_kept_by_tape",
    "captured_by",
    "check_gradients",
    "compare_times",
    "cpu_name",
    "cuda_peak",
    "draw_graph",
    "draw_partition",
    "draw_tape",
    "find_problems",
    "first_line_of_error",
    "format_batch_size",
    "format_peak",
    "format_ratio",
    "format_time",
    "live_bytes_peak",
    "live_bytes_timeline",
    "median_time",
    "nodes_run_by",
    "operation_counts",
    "profiler_peak",
]
