"""NumPy inside autograd Functions, for the double backward chapters.

``numpy_op`` runs a NumPy function on tensors: autograd does not see the
computation, which is the point of the chapter ``double_backward``
(``numpy_under_torch_func`` and ``custom_operators`` define their own copy).
"""

import numpy as np
import torch


def numpy_op(function, *tensors):
    """Apply the NumPy ``function`` to ``tensors``, hidden from autograd.

    Each tensor is detached and read as a NumPy array; the result comes back
    as a tensor of the dtype NumPy gives it, with no history.
    """
    if not callable(function):
        raise TypeError(
            f"numpy_op: the first argument must be a function of arrays, got "
            f"{type(function).__name__}; write numpy_op(lambda a: a**3, x)."
        )
    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        kinds = [type(t).__name__ for t in tensors]
        raise TypeError(
            f"numpy_op: pass one or more tensors after the function, got "
            f"{kinds}; convert numbers with torch.tensor(...) first."
        )
    arrays = [tensor.detach().numpy() for tensor in tensors]
    return torch.from_numpy(np.asarray(function(*arrays)))
