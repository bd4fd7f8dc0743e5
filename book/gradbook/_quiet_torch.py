"""Keep one warning that torch raises about its own internals off the chapters' pages."""
import warnings

# torch 2.14 deprecates `torch.jit.script` with a FutureWarning. Its own forward-mode AD still
# calls it: the first dual tensor of a process (every `torch.func.jvp`, `jacfwd`, `fwAD.make_dual`)
# imports `torch._decomp.decompositions_for_jvp` (from `_maybe_load_decompositions` in
# `torch/autograd/forward_ad.py`), which scripts its decompositions when it is imported. The
# warning is about torch's code, not the reader's, so that module is imported here once, with
# exactly that warning ignored; a reader's own `torch.jit.script` still warns.
JIT_SCRIPT_DEPRECATED = r"`torch\.jit\.script` is deprecated"


def load_forward_mode_decompositions_quietly():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=JIT_SCRIPT_DEPRECATED, category=FutureWarning)
        try:
            import torch._decomp.decompositions_for_jvp  # noqa: F401
        except ImportError:  # a private module: a later torch may move it, then nothing to do
            pass
