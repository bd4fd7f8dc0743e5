"""The peephole checker of compiled_backwards catches the dtype mistake."""

import pytest
from fixtures import chapter_namespace, says


@pytest.mark.timeout(120)
def test_check_peephole_fires_on_a_pass_that_changes_a_dtype():
    ns = chapter_namespace("compiled_backwards.ipynb", "check_peephole")
    aten = ns["aten"]

    def drop_without_dtype_check(graph_module):
        # the solution without its dtype check: an integer tensor times 1.0
        # loses its multiplication and stays an integer tensor
        for node in list(graph_module.graph.nodes):
            if node.target is aten.mul.Tensor and node.args[1] == 1.0:
                node.replace_all_uses_with(node.args[0])
                graph_module.graph.erase_node(node)
        graph_module.recompile()
        return graph_module

    said = says(ns["check_peephole"], drop_without_dtype_check)
    assert "came out torch.int64" in said, said
    assert "keep a multiplication that changes the dtype" in said
