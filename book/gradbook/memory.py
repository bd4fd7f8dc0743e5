"""Peak memory of a piece of code, measured so that a page can print it.

``live_bytes_peak(run)`` is the meter the chapters print. While ``run()``
runs, a TorchDispatchMode sees every ATen operation, forward and backward
alike, and adds the size of each block of memory (storage) that an operation
creates; the block is taken off again when it is freed. The peak is the
largest sum reached, counted from zero at the start: memory that existed
before ``run()`` (inputs, weights) is not in it. The figure depends only on
the operations called and on shapes and dtypes, so it is the same on every
machine and every run. It is blind to what a kernel allocates for itself and
frees before returning (a convolution's workspace): such memory is never an
operation's output. A storage that an operation enlarges in place
(``resize_``, an ``out=`` tensor too small for the result) counts with its
new size. ``live_bytes_timeline(run)`` gives the same count operation by
operation, to see where the peak is reached.

Both meters count what ``run()`` creates: a block that existed before and is
freed during ``run()`` leaves their running total unchanged (the profiler
records no size for it), although the process then holds less than at the
start.

Meta tensors and forward mode's zero tangents (ZeroTensors) report a size
but hold no memory; the live-bytes meters leave them out, so that they
stay right under ``torch.func`` transforms.

``profiler_peak(run)`` reads torch.profiler's memory timeline, which sees
every allocation of the CPU allocator, workspaces included. Its figure
depends on the kernels the machine picks: use it to cross-check, not to
print exactly. Under ``torch.func`` transforms it is far too high (for a
Hessian-vector product, about 3x the process's high-water mark): use the
live-bytes meter there. ``process_peak(run)`` is the operating system's
view (Linux only): the growth of the process's resident memory, exact for
blocks large enough that the C library returns them to the system when
they are freed (above 32 MiB by default). ``cpu_kernels("native")`` runs a
block with PyTorch's own CPU kernels instead of oneDNN's. ``format_peak`` and ``format_batch_size`` write its figures, and
what they imply, marked as measured ("~20.20 MiB", "~202 images"), so that
tests/sanitize.cfg rewrites them and nothing else. ``cuda_peak(run)`` is the
CUDA allocator's own figure.
"""

import contextlib
import os
import weakref


def _storage(tensor):
    try:
        return tensor.untyped_storage()
    except (RuntimeError, NotImplementedError):  # layouts with no storage
        return None


def _holds_no_memory(tensor):
    """A meta tensor (shape and dtype only) or a ZeroTensor (forward mode's
    zero tangent): its storage reports a size but nothing is allocated."""
    return tensor.is_meta or tensor._is_zerotensor()


def _tensors(tree):
    import torch
    from torch.utils._pytree import tree_flatten

    leaves = tree_flatten(tree)[0]
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


class LiveBytesMeter:
    """Bytes created by ATen operations and still alive, and their peak."""

    def __init__(self):
        self.live = 0
        self.peak = 0
        self._sizes = {}  # id of a live storage's Python object -> bytes
        self.timeline = []  # (operation, live bytes before it, after it)

    def _count(self, storage):
        key = id(storage)
        if key in self._sizes:
            return
        size = storage.nbytes()
        self._sizes[key] = size
        self.live += size
        self.peak = max(self.peak, self.live)
        # PyTorch keeps a storage's Python object alive for as long as the
        # C++ storage lives, so the finalizer runs when the memory is freed.
        weakref.finalize(storage, self._release, key)

    def _grow(self, storage, before):
        """A storage that existed before an operation and is larger after."""
        grown = storage.nbytes() - before
        if grown <= 0:
            return
        key = id(storage)
        if key in self._sizes:  # created during the run: now larger
            self._sizes[key] += grown
            self.live += grown
            self.peak = max(self.peak, self.live)
        elif before == 0:  # an empty block from before, now holding data
            self._count(storage)
        else:  # a block from before the run: only its growth is new
            self.live += grown
            self.peak = max(self.peak, self.live)
            self._sizes[key] = grown
            weakref.finalize(storage, self._release, key)

    def _release(self, key):
        self.live -= self._sizes.pop(key)

    def mode(self):
        """A TorchDispatchMode that counts into this meter while active."""
        from torch.utils._python_dispatch import TorchDispatchMode

        meter = self

        class _Counting(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                # Held, not only their ids, so that no id is reused meanwhile.
                existing = {}
                sizes_before = {}
                for tensor in _tensors((args, kwargs)):
                    storage = _storage(tensor)
                    if storage is not None:
                        existing[id(storage)] = storage
                        sizes_before[id(storage)] = storage.nbytes()
                live_before = meter.live
                result = func(*args, **kwargs)
                # An input's storage may have been enlarged (resize_, out=).
                for key, storage in existing.items():
                    meter._grow(storage, sizes_before[key])
                for tensor in _tensors(result):
                    if _holds_no_memory(tensor):
                        continue
                    storage = _storage(tensor)
                    # An output sharing an input's storage (a view, an
                    # in-place result) allocates nothing more.
                    if storage is not None and id(storage) not in existing:
                        meter._count(storage)
                name = str(func.overloadpacket.__name__)
                meter.timeline.append((name, live_before, meter.live))
                return result

        return _Counting()


def live_bytes_peak(run):
    """Peak bytes, above the start, that ATen operations create in run().

    Returns ``(peak, still_live)``: ``still_live`` is what the operations
    created that is still held when ``run()`` has returned and its result is
    dropped (gradients in ``.grad``, a graph kept for a second backward).
    """
    meter = _metered(run, "live_bytes_peak")
    return meter.peak, meter.live


def live_bytes_timeline(run):
    """The live-bytes count of ``live_bytes_peak``, operation by operation.

    Returns a list of ``(name, before, after)``, one per ATen operation that
    ``run()`` calls, forward and backward: its name (``"convolution"``,
    ``"mul_"``...) and the bytes alive, counted from zero at the start, just
    before the operation and just after it. ``before`` shows what is held
    when a kernel starts, which is where its workspace comes on top.
    """
    return list(_metered(run, "live_bytes_timeline").timeline)


def _require_callable(run, caller):
    if not callable(run):
        name = type(run).__name__
        raise TypeError(f"{caller}: expected a function to call, got {name}.")


def _metered(run, caller):
    """Run ``run()`` under a fresh LiveBytesMeter, its result dropped."""
    _require_callable(run, caller)
    meter = LiveBytesMeter()
    with meter.mode():
        result = run()
    del result
    return meter


@contextlib.contextmanager
def _quiet_file_descriptor(fd):
    """Send what C++ code writes to ``fd`` to /dev/null while active.

    Kineto writes a line to stderr when the profiler starts and stops; it
    would end up in a notebook's outputs.
    """
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def profiler_peak(run):
    """Peak bytes of CPU memory allocated during run(), by torch.profiler.

    Every allocation and free of the CPU allocator is replayed in time
    order; memory that existed before ``run()`` is left out. Kernel
    workspaces are included, so the figure depends on the kernels this
    machine uses.
    """
    from torch.profiler import ProfilerActivity, profile
    from torch.profiler._memory_profiler import Action

    _require_callable(run, "profiler_peak")
    with _quiet_file_descriptor(2):
        with profile(
            activities=[ProfilerActivity.CPU],
            profile_memory=True,
            record_shapes=True,
            with_stack=True,
        ) as profiler:
            result = run()
            del result
        timeline = profiler._memory_profile().timeline
    live = peak = 0
    for _, action, _, size in sorted(timeline, key=lambda event: event[0]):
        if action == Action.CREATE:
            live += size
        elif action == Action.DESTROY:
            live -= size
        peak = max(peak, live)
    return peak


def profiled_op_names(run):
    """Names of the operations torch.profiler records in run(), each once,
    in the order they first start: ATen operations and the kernels they
    call beneath them (which convolution backend ran, for example)."""
    from torch.profiler import ProfilerActivity, profile

    _require_callable(run, "profiled_op_names")
    with _quiet_file_descriptor(2):
        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            result = run()
            del result
    names = []
    for event in sorted(profiler.events(), key=lambda e: e.time_range.start):
        if event.name not in names:
            names.append(event.name)
    return names


MIB = 2**20


def format_peak(num_bytes):
    """A peak measured by the profiler, for the page: '~20.20 MiB'.

    The tilde marks a figure that depends on the machine's kernels."""
    return f"~{num_bytes / MIB:.2f} MiB"


def format_batch_size(images):
    """A batch size derived from measured peaks, for the page: '~202 images'."""
    if not isinstance(images, int) or images < 0:
        raise ValueError(
            f"format_batch_size: expected a count of images, got {images!r}."
        )
    return f"~{images} images"


def cuda_peak(run, *, warmup=1):
    """Peak bytes the CUDA allocator held during run(), above the start.

    ``run()`` is called ``warmup`` times first, so that one-time allocations
    (library handles, workspaces chosen on the first call) do not count.
    """
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("cuda_peak: no CUDA device here.")
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    result = run()
    torch.cuda.synchronize()
    del result
    return torch.cuda.max_memory_allocated() - start


def _status_bytes(key):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"process_peak: no {key} in /proc/self/status.")


def _release_free_memory():
    """Hand the C library's free memory back to the system (glibc), so that
    a block ``run()`` reuses from it is counted when touched again."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return
    libc = ctypes.CDLL(name)
    if hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def process_peak(run):
    """Peak resident memory of this process during run(), above the start.

    Linux only: the kernel's high-water mark (VmHWM) is reset through
    /proc/self/clear_refs before ``run()``. Memory the C library keeps for
    reuse counts as resident; free memory is handed back to the system
    first (glibc's ``malloc_trim``), and the figure is close for blocks that
    are returned to the system when freed (large ones): expect a few MiB
    either way."""
    import gc

    _require_callable(run, "process_peak")
    if not os.path.exists("/proc/self/clear_refs"):
        raise RuntimeError("process_peak: needs Linux's /proc/self/clear_refs.")
    gc.collect()
    _release_free_memory()
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")  # reset the high-water mark to the current size
    start = _status_bytes("VmRSS")
    result = run()
    del result
    return _status_bytes("VmHWM") - start


@contextlib.contextmanager
def cpu_kernels(backend):
    """Run a block with oneDNN's CPU kernels ("onednn", PyTorch's default
    where oneDNN is built in) or with oneDNN switched off ("native": PyTorch
    then picks another kernel by shape, such as NNPACK or its own im2col)."""
    import warnings

    import torch

    if backend not in ("onednn", "native"):
        raise ValueError(
            f"cpu_kernels: expected 'onednn' or 'native', got {backend!r}."
        )
    if backend == "onednn" and not torch.backends.mkldnn.is_available():
        raise RuntimeError("cpu_kernels: this torch has no oneDNN.")
    with warnings.catch_warnings():
        # set_flags also sets a TF32 switch for Intel GPUs and warns about it
        warnings.filterwarnings("ignore", message="TF32 acceleration")
        flags = torch.backends.mkldnn.flags(enabled=backend == "onednn")
        flags.__enter__()
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="TF32 acceleration")
            flags.__exit__(None, None, None)
