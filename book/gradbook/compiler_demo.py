"""Helpers of the chapter Compiled backwards: what a backward graph writes."""

import torch
import torch.fx

__all__ = ["bytes_written"]


def bytes_written(graph_module, *inputs):
    """Bytes of the new storages that running graph_module on inputs makes.

    Every tensor a node of the graph returns (a call_function, a
    call_method or a call_module) is counted once per storage; views of an
    input or of an earlier result (an expand, say) share its storage and add
    nothing. None stands for an undefined input.
    """
    if not isinstance(graph_module, torch.fx.GraphModule):
        raise TypeError(
            "bytes_written needs a torch.fx.GraphModule, got "
            f"{type(graph_module).__name__}: pass the traced graph itself"
        )
    placeholders = graph_module.graph.find_nodes(op="placeholder")
    if len(inputs) != len(placeholders):
        raise ValueError(
            f"the graph takes {len(placeholders)} inputs, got {len(inputs)}: "
            "pass one value (or None) per placeholder, in order"
        )
    seen = {
        x.untyped_storage().data_ptr()
        for x in inputs
        if isinstance(x, torch.Tensor)
    }
    total = 0
    alive = []  # every result stays alive, so no address is reused

    def count(result):
        nonlocal total
        alive.append(result)
        results = result if isinstance(result, (tuple, list)) else [result]
        for tensor in results:
            if not isinstance(tensor, torch.Tensor):
                continue
            storage = tensor.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += storage.nbytes()
        return result

    class Counting(torch.fx.Interpreter):
        # functions (aten ops), methods (x.mul) and modules all count
        def call_function(self, target, args, kwargs):
            return count(super().call_function(target, args, kwargs))

        def call_method(self, target, args, kwargs):
            return count(super().call_method(target, args, kwargs))

        def call_module(self, target, args, kwargs):
            return count(super().call_module(target, args, kwargs))

    Counting(graph_module).run(*inputs)
    return total
