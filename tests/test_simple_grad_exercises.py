"""Every exercise checker of Part I fires on the mistake it names.

Each test runs a chapter's code cells in order (as a reader who has run the chapter has
them), then feeds the checker a wrong answer and expects the
message written for that mistake. A checker that accepts the wrong answer would let a reader
believe a broken solution works.
"""
import contextlib
import functools
import io

import nbformat
import pytest
import torch

from conftest import BOOK
from fixtures import chapter_namespace, says
from gradbook.two_outputs_exercise import check_two_outputs


@pytest.fixture(scope="module")
def tape_chapter():
    return chapter_namespace("simple_grad_1_tape.ipynb", "check_square")


@pytest.mark.timeout(60)
def test_check_square_names_each_mistake(tape_chapter):
    ns = tape_chapter
    Variable, TapeEntry, tape = ns["Variable"], ns["TapeEntry"], ns["gradient_tape"]

    def square_with(rule, forward=lambda value: value * value):
        def operator_square(x):
            r = Variable(forward(x.value))

            def propagate(dL_doutputs):
                return [rule(dL_doutputs[0], x)]

            tape.append(TapeEntry([x.name], [r.name], propagate))
            return r

        return operator_square

    check = ns["check_square"]
    assert "returned a Tensor" in says(check, lambda x: x.value**2)
    assert "exactly one TapeEntry" in says(
        check, lambda x: x * x * Variable.constant(torch.ones_like(x.value))
    )
    cube = square_with(lambda g, x: g * x, forward=lambda value: value**3)
    assert "not x squared" in says(check, cube)
    assert "first gradient is wrong" in says(check, square_with(lambda g, x: g * x))
    assert "ignores dL_dr" in says(check, square_with(lambda g, x: x + x))
    off_tape = square_with(lambda g, x: Variable(g.value * 2 * x.value))
    assert "cannot be differentiated" in says(check, off_tape)
    # right first gradient, but dL_dr taken off the tape: only a loss whose
    # dL_dr depends on x tells it apart
    detached_dL_dr = square_with(lambda g, x: Variable(g.value) * (x + x))
    assert "cannot be differentiated" in says(check, detached_dL_dr)
    raw_tensor = square_with(lambda g, x: g.value * 2 * x.value)
    assert "propagate returned a Tensor" in says(check, raw_tensor)
    assert "the multiplication's (x * x)" in says(check, lambda x: x * x)
    # right at first order, but the rule names a constant: the second
    # gradient runs it again, and the name is already taken
    named = square_with(
        lambda g, x: g * Variable.constant(torch.full_like(x.value, 2.0), name="two") * x
    )
    assert "ran your propagate again for the second gradient" in says(check, named)
    assert "Correct" in says(check, ns["operator_square"])


@pytest.mark.timeout(60)
def test_check_fit_names_each_mistake(tape_chapter):
    ns = tape_chapter
    check = ns["check_fit"]
    x_data, y_data = ns["x_data"], ns["y_data"]

    def plain_torch(w_value):  # right numbers, but no tape: not the exercise
        w = w_value.clone().requires_grad_()
        loss = ((torch.exp(w * x_data) - y_data) ** 2).sum()
        return loss.detach(), torch.autograd.grad(loss, w)[0]

    assert "Nothing was recorded on the tape" in says(check, plain_torch)

    Variable = ns["Variable"]

    def finite_difference(w_value):  # the loss on the tape, grad never called
        ns["reset_tape"]()
        w = Variable.constant(w_value, name="w")
        x = Variable.constant(x_data, name="x")
        minus_y = Variable.constant(-y_data, name="minus_y")
        residual = (w.expand(3) * x).exp() + minus_y
        loss = (residual * residual).sum(name="loss")

        def loss_at(w):
            return ((torch.exp(w * x_data) - y_data) ** 2).sum()

        h = 1e-6
        return loss.value, (loss_at(w_value + h) - loss_at(w_value - h)) / (2 * h)

    assert "did not call grad" in says(check, finite_difference)

    def unused_exp(w_value):  # grad ran, but on a value that is not the loss
        ns["reset_tape"]()
        w = Variable.constant(w_value, name="w")
        ns["grad"](w.exp(), [w])

        def loss_at(w):
            return ((torch.exp(w * x_data) - y_data) ** 2).sum()

        h = 1e-6
        slope = (loss_at(w_value + h) - loss_at(w_value - h)) / (2 * h)
        return loss_at(w_value), slope

    assert "not the loss" in says(check, unused_exp)
    zeros = says(check, lambda w_value: (torch.tensor(0.0), torch.tensor(0.0)))
    assert "The loss at w = 0 is 0.0000" in zeros
    right = says(check, ns["neuron_loss"])
    assert right.startswith("first gradient") and "Correct" in right


@pytest.fixture(scope="module")
def known_zeros_chapter():
    return chapter_namespace("simple_grad_2_known_zeros.ipynb", "check_two_outputs")


@pytest.mark.timeout(60)
def test_the_chapter_checks_two_outputs_with_gradbook_and_passes(known_zeros_chapter):
    # the mistakes are tested in test_two_outputs_exercise.py, on the checker itself
    ns = known_zeros_chapter
    assert ns["check_two_outputs"] is check_two_outputs
    assert "Correct" in says(check_two_outputs, ns["operator_square_and_double"])


@pytest.fixture(scope="module")
def second_order_chapter():
    return chapter_namespace("simple_grad_3_gradients_of_gradients.ipynb", "check_pruning")


@pytest.mark.timeout(60)
def test_check_third_order_and_check_pruning_name_their_mistakes(second_order_chapter):
    ns = second_order_chapter
    grad, Variable, reset_tape = ns["grad"], ns["Variable"], ns["reset_tape"]

    def second_order_only(a_value, b_value):  # stops one order early
        reset_tape()
        a = Variable.constant(a_value, name="a")
        b = Variable.constant(b_value, name="b")
        first = grad(ns["simple"](a, b).sum(), [a, b])
        return grad(ns["norm_of_gradients"](*first), [a, b])

    assert "differs from torch.autograd" in says(ns["check_third_order"], second_order_only)
    assert "Correct" in says(ns["check_third_order"], ns["third_order"])

    def gradients_made_constants(a_value, b_value):  # L1 cut off the tape
        reset_tape()
        a = Variable.constant(a_value, name="a")
        b = Variable.constant(b_value, name="b")
        first = grad(ns["simple"](a, b).sum(), [a, b])
        cut = [Variable.constant(g.value) for g in first]
        return grad(ns["norm_of_gradients"](*cut), [a, b])

    told = says(ns["check_third_order"], gradients_made_constants)
    assert "A result is None: L2 has no path on the tape" in told

    chapter_a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)

    def ignores_its_arguments(a_value, b_value):  # uses the chapter's 3-element a, b
        return ns["third_order"](chapter_a, chapter_a + 1)

    told = says(ns["check_third_order"], ignores_its_arguments)  # allclose raised
    assert "has shape (3,), not (4,)" in told and "a_value and b_value passed in" in told
    assert "Asked for a alone it ran 5 rules" in says(ns["check_pruning"], ns["grad"])

    def drops_everything(L, desired_results):
        return [None for _ in desired_results]

    assert "differ from grad's" in says(ns["check_pruning"], drops_everything)

    def detached(L, desired_results):  # right values, taken off the tape
        return [
            None if g is None else Variable(g.value)
            for g in ns["grad_pruned"](L, desired_results)
        ]

    def sums_off_tape(L, desired_results):  # the solution, adding off the tape
        depends = {x.name for x in desired_results}
        on_path = []
        for entry in ns["gradient_tape"]:
            if depends & set(entry.inputs):
                depends |= set(entry.outputs)
                on_path.append(entry)
        dL_d = {L.name: Variable(torch.ones_like(L.value))}
        for entry in reversed(on_path):
            dL_doutputs = [dL_d.get(name) for name in entry.outputs]
            if all(g is None for g in dL_doutputs):
                continue
            for name, g in zip(entry.inputs, entry.propagate(dL_doutputs)):
                if g is not None:
                    dL_d[name] = (
                        Variable(dL_d[name].value + g.value) if name in dL_d else g
                    )
        return [dL_d.get(x.name) for x in desired_results]

    for mistake in (detached, sums_off_tape):
        assert "second-order gradients differ" in says(ns["check_pruning"], mistake)
    assert "Correct" in says(ns["check_pruning"], ns["grad_pruned"])

    def no_reset(a_value, b_value):  # the solution without reset_tape()
        a = Variable.constant(a_value, name="a")
        b = Variable.constant(b_value, name="b")
        first = grad(ns["simple"](a, b).sum(), [a, b])
        second = grad(ns["norm_of_gradients"](*first), [a, b])
        return grad(ns["norm_of_gradients"](*second), [a, b])

    says(ns["check_third_order"], ns["third_order"])  # leaves a named "a" on the tape
    told = says(ns["check_third_order"], no_reset)
    assert "already in use" in told and "reset_tape()" in told


@pytest.fixture(scope="module")
def aggregate_chapter():
    return chapter_namespace("simple_grad_4_aggregate_operators.ipynb", "check_none_at_top")


@pytest.mark.timeout(90)
def test_check_fused_product_refuses_a_hidden_a_recomputed_and_a_zero_building_product(
    aggregate_chapter,
):
    ns = aggregate_chapter
    Variable, record, plus = ns["Variable"], ns["record"], ns["plus"]

    def fused_with(rule, declare=True):
        def fused_product(a, b):
            u = Variable(a.value * b.value)
            r = Variable(u.value * a.value)

            def propagate(dL_doutputs):
                dL_dr, dL_du = dL_doutputs if declare else (dL_doutputs[0], None)
                return rule(dL_dr, dL_du, a, b, u)

            record([a, b], [r, u] if declare else [r], propagate)
            return r

        return fused_product

    def hidden(dL_dr, dL_du, a, b, u):  # right to first order only
        dL_du = dL_dr * a
        return [plus(dL_dr * u, dL_du * b), dL_du * a]

    def recomputing(dL_dr, dL_du, a, b, u):
        u = a * b  # rebuilt instead of the kept u
        if dL_dr is not None:
            dL_du = plus(dL_du, dL_dr * a)
        return [plus(None if dL_dr is None else dL_dr * u, dL_du * b), dL_du * a]

    def zero_building(dL_dr, dL_du, a, b, u):
        zero = Variable(torch.zeros_like(a.value))
        dL_dr = zero if dL_dr is None else dL_dr
        dL_du = (zero if dL_du is None else dL_du) + dL_dr * a
        return [dL_dr * u + dL_du * b, dL_du * a]

    check = ns["check_fused_product"]
    assert "second ones are wrong" in says(check, fused_with(hidden, declare=False))
    assert "computes a * b again" in says(check, fused_with(recomputing))
    assert "build a tensor of zeros" in says(check, fused_with(zero_building))
    assert "Correct" in says(check, ns["fused_product"])


@pytest.mark.timeout(90)
def test_check_why_none_and_check_none_at_top_name_their_mistakes(aggregate_chapter):
    ns = aggregate_chapter
    for letter in "ACD":
        assert "Not that one." in says(ns["check_why_none"], letter)
    assert "one of the letters" in says(ns["check_why_none"], "E")
    assert "Correct" in says(ns["check_why_none"], " b")  # lower case and spaces
    assert "propagate received a None" in says(ns["check_none_at_top"], ns["grad"])
    tape = ns["gradient_tape"]

    def grad_with_raw_zeros(L, desired_results):
        # the mistake of handing propagate torch.zeros, not a Variable, for a None
        for position, entry in enumerate(tape):
            def propagate(gradients, rule=entry.propagate):
                return rule([torch.zeros(()) if g is None else g for g in gradients])

            tape[position] = entry._replace(propagate=propagate)
        return ns["grad"](L, desired_results)

    says_instead = says(ns["check_none_at_top"], grad_with_raw_zeros)
    assert "something not a Variable" in says_instead and "None" not in says_instead

    def grad_with_zeros_of_the_loss_shape(L, desired_results):
        # the mistake of making the stand-in zeros with L's shape, (), not the
        # shape of the gradient the entry received
        Variable = ns["Variable"]
        dL_d = {L.name: Variable(torch.ones_like(L.value))}
        for entry in reversed(tape):
            received = [dL_d.get(name) for name in entry.outputs]
            if all(g is None for g in received):
                continue
            received = [
                Variable.constant(torch.zeros_like(L.value)) if g is None else g
                for g in received
            ]
            for name, g in zip(entry.inputs, entry.propagate(received)):
                if g is not None:
                    dL_d[name] = dL_d[name] + g if name in dL_d else g
        return [dL_d.get(x.name) for x in desired_results]

    told = says(ns["check_none_at_top"], grad_with_zeros_of_the_loss_shape)
    assert "need the shape of the gradient the entry did receive" in told


@pytest.mark.timeout(60)
def test_check_hyperbolic_names_each_mistake(second_order_chapter):
    ns = second_order_chapter
    Variable, TapeEntry = ns["Variable"], ns["TapeEntry"]
    check_with_cosh = functools.partial(ns["check_hyperbolic"], operator_cosh=ns["operator_cosh"])
    told = says(check_with_cosh, ns["operator_sinh_wrong"])
    assert "operator_sinh are right, second ones are wrong" in told

    def sinh_times_x(x):  # the derivative of sinh taken as x: first order wrong
        r = Variable(x.value.sinh())
        ns["trace"]("{} = {}.sinh()", r.name, x.name)
        ns["gradient_tape"].append(
            TapeEntry([x.name], [r.name], lambda gradients: [gradients[0] * x])
        )
        return r

    def silent_sinh(x):  # right rule, but no trace line
        r = Variable(x.value.sinh())
        ns["gradient_tape"].append(
            TapeEntry([x.name], [r.name], lambda gradients: [gradients[0] * ns["operator_cosh"](x)])
        )
        return r

    assert "First gradients through operator_sinh are wrong" in says(check_with_cosh, sinh_times_x)
    assert "printed no trace line" in says(check_with_cosh, silent_sinh)
    assert "Correct" in says(check_with_cosh, ns["operator_sinh"])


@pytest.fixture(scope="module")
def side_by_side_chapter():
    return chapter_namespace("simple_grad_5_side_by_side.ipynb", "check_mystery")


@pytest.mark.timeout(60)
def test_side_by_side_checkers_name_their_mistakes(side_by_side_chapter):
    ns = side_by_side_chapter
    assert "which side needs the transpose" in says(ns["check_matmul"], ns["operator_matmul_wrong"])

    def calls_a_missing_method(A, B):
        return A.t()  # Variable has no .t(): not a question of shapes

    def swapped_gradients(A, B):  # [A^T G, G B^T]: each the other's shape
        R = ns["Variable"](A.value @ B.value)

        def propagate(gradients):
            (dR,) = gradients
            matmul, transpose = ns["operator_matmul"], ns["operator_transpose"]
            return [matmul(transpose(A), dR), matmul(dR, transpose(B))]

        ns["gradient_tape"].append(ns["TapeEntry"]([A.name, B.name], [R.name], propagate))
        return R

    assert "which side needs the transpose" in says(ns["check_matmul"], swapped_gradients)
    says_instead = says(ns["check_matmul"], calls_a_missing_method)
    assert "AttributeError" in says_instead and "transpose" not in says_instead
    assert "should have the shape of c" in says(ns["check_grad_zeros"], ns["grad_zeros_wrong"])
    Variable, TapeEntry = ns["Variable"], ns["TapeEntry"]

    def float32_zeros(L, desired_results):
        gradients = ns["grad"](L, desired_results)
        return [
            Variable(torch.zeros_like(x.value, dtype=torch.float32)) if g is None else g
            for g, x in zip(gradients, desired_results)
        ]

    assert "should have the dtype of c" in says(ns["check_grad_zeros"], float32_zeros)

    def matmul_off_tape(A, B):  # right first gradients, raw products wrapped
        R = Variable(A.value @ B.value)

        def propagate(gradients):
            (dR,) = gradients
            return [Variable(dR.value @ B.value.T), Variable(A.value.T @ dR.value)]

        ns["gradient_tape"].append(TapeEntry([A.name, B.name], [R.name], propagate))
        return R

    told = says(ns["check_matmul"], matmul_off_tape)
    assert "Second gradient for A differs" in told and "not from .value" in told

    def one_product(a, b):
        return (a * b).sum()

    def reads_a_twice(a, b):  # the same nodes and arrow labels, other inputs
        return ((a * b) * a).sum()

    def operands_swapped(a, b):  # the orange tensor becomes the 'other'
        return (b * (a * b)).sum()

    def mystery(a, b):
        return ((a * b) * b).sum()

    check = ns["check_mystery"]
    assert "backward nodes" in says(check, one_product)
    assert "other arrows" in says(check, reads_a_twice)
    assert "other saved tensors" in says(check, operands_swapped)
    assert "It fails on tensors" in says(check, lambda a, b: a.value.sum())
    assert "Right" in says(check, mystery)


@pytest.fixture(scope="module")
def compiler_chapter():
    return chapter_namespace("what_a_compiler_sees.ipynb", "check_backward_pass")


@pytest.mark.timeout(120)
def test_check_partition_prediction_names_each_mistake(compiler_chapter):
    check = compiler_chapter["check_partition_prediction"]
    assert "at least one saved tensor is missing" in says(check, {"default": [], "min-cut": []})
    too_many = {"default": ["primals_1", "primals_2", "mul", "add"], "min-cut": []}
    assert "not saved: add" in says(check, too_many)


@pytest.mark.timeout(120)
def test_check_backward_pass_names_each_mistake(compiler_chapter):
    ns = compiler_chapter
    check, backward_pass, aten = ns["check_backward_pass"], ns["backward_pass"], ns["aten"]

    def last_contribution_only(forward):
        # the solution with every aten.add of two gradients replaced by its second operand:
        # a value used twice keeps only one contribution
        backward = backward_pass(forward)
        copied = {node.name for node in forward.graph.nodes}
        for node in list(backward.graph.nodes):
            if node.target is aten.add.Tensor and node.name not in copied:
                node.replace_all_uses_with(node.args[1])
                backward.graph.erase_node(node)
        backward.recompile()
        return backward

    def with_torch_autograd(forward):
        graph = torch.fx.Graph()
        a, b = graph.placeholder("a"), graph.placeholder("b")
        loss = graph.call_function(forward, (a, b))
        graph.output(graph.call_function(torch.autograd.grad, (loss, [a, b])))
        return torch.fx.GraphModule(torch.nn.Module(), graph)

    assert "return one gradient per input" in says(check, lambda forward: forward)
    assert "Does every use of a value add its contribution?" in says(
        check, last_contribution_only
    )
    assert "it fails" in says(check, with_torch_autograd)

    def sum_without_expand(forward):
        # the solution with sum's rule forgetting the expand: a 0-d gradient, which
        # torch.allclose would broadcast against the right [15, 15, 15]
        backward = backward_pass(forward)
        for node in list(backward.graph.nodes):
            if node.target is aten.expand.default and node.args[1] == [3]:
                if node.args[0].target is aten.ones_like.default:
                    continue  # the seed's expand of the loss is not sum's rule here
                node.replace_all_uses_with(node.args[0])
                backward.graph.erase_node(node)
        backward.recompile()
        return backward

    assert "has shape (), not (3,)" in says(check, sum_without_expand)

    def seed_without_expand(forward):
        # the solution with the seed's expand left out: the 0-d seed reaches a
        # product with a vector, and broadcasting makes every gradient right
        backward = backward_pass(forward)
        for node in list(backward.graph.nodes):
            if node.target is aten.expand.default:
                if node.args[0].target is aten.ones_like.default:
                    node.replace_all_uses_with(node.args[0])
                    backward.graph.erase_node(node)
        backward.recompile()
        return backward

    assert "right only because aten broadcasts" in says(check, seed_without_expand)
    assert "Correct" in says(check, backward_pass)


@pytest.mark.timeout(240)  # runs the chapter and three checkers; ~100 s alone
def test_compiled_known_zeros_checkers_name_their_mistakes():
    ns = chapter_namespace("compiled_known_zeros.ipynb", "check_dispatcher")
    aten = ns["aten"]

    def drop_every_constant_factor(graph_module):
        for node in list(graph_module.graph.nodes):
            if node.target is aten.mul.Tensor and isinstance(node.args[1], float):
                node.replace_all_uses_with(node.args[0])
                graph_module.graph.erase_node(node)
        graph_module.recompile()
        return graph_module

    check_peephole = ns["check_peephole"]
    assert "multiplications by 1.0 are left" in says(check_peephole, lambda g: g)
    assert "The gradients changed" in says(check_peephole, drop_every_constant_factor)

    def drop_every_multiply_by_one(graph_module, recompile):
        # the graph edit without the solution's dtype check; an integer
        # tensor times 1.0 then loses its multiplication and stays an integer
        for node in list(graph_module.graph.nodes):
            if node.target is aten.mul.Tensor and node.args[1] == 1.0:
                node.replace_all_uses_with(node.args[0])
                graph_module.graph.erase_node(node)
        if recompile:
            graph_module.recompile()
        return graph_module

    # the code that runs is not regenerated
    said = says(check_peephole, lambda g: drop_every_multiply_by_one(g, False))
    assert "call graph_module.recompile()" in said, said
    said = says(check_peephole, lambda g: drop_every_multiply_by_one(g, True))
    assert "came out torch.int64" in said, said
    assert "keep a multiplication that changes the dtype" in said
    assert "Correct" in says(check_peephole, ns["drop_multiply_by_one"])
    check_dispatcher = ns["check_dispatcher"]

    def specialise(backward, undefined):
        # looked up at each call, as a reader's code in the chapter does
        return ns["specialise"](backward, undefined)

    assert "run fails" in says(check_dispatcher, lambda backward: specialise(backward, set()))

    def without_cache(backward):
        # caches the graphs, but not in run.cache
        names = [n.name for n in backward.graph.find_nodes(op="placeholder")]
        cache = {}

        def run(*inputs):
            pattern = frozenset(name for name, x in zip(names, inputs) if x is None)
            if pattern not in cache:
                cache[pattern] = specialise(backward, pattern)
            return cache[pattern](*inputs)

        return run

    assert "run.cache should hold" in says(check_dispatcher, without_cache)

    def specialising_every_call(backward, keep_first=False):
        # a cache of the right size, but each graph built again on every call;
        # keep_first stores only the first graph, so the cache never changes
        names = [n.name for n in backward.graph.find_nodes(op="placeholder")]
        cache = {}

        def run(*inputs):
            pattern = frozenset(name for name, x in zip(names, inputs) if x is None)
            graph = specialise(backward, pattern)
            if keep_first:
                graph = cache.setdefault(pattern, graph)
            cache[pattern] = graph
            return graph(*inputs)

        run.cache = cache
        return run

    assert "was built again" in says(check_dispatcher, specialising_every_call)
    keeping_first = functools.partial(specialising_every_call, keep_first=True)
    assert "was built again" in says(check_dispatcher, keeping_first)
    assert "Correct" in says(check_dispatcher, ns["make_dispatcher"])

    def binding_specialise_early(backward, build=ns["specialise"]):
        # a right solution that takes specialise as a default argument, bound
        # when the solution is defined: its builds must be counted too
        names = [n.name for n in backward.graph.find_nodes(op="placeholder")]
        cache = {}

        def run(*inputs):
            pattern = frozenset(name for name, x in zip(names, inputs) if x is None)
            if pattern not in cache:
                cache[pattern] = build(backward, pattern)
            return cache[pattern](*inputs)

        run.cache = cache
        return run

    said = says(check_dispatcher, binding_specialise_early)
    assert "Correct" in said, said


@pytest.mark.timeout(300)  # runs the chapter, Inductor included; ~60 s alone
def test_compiled_backwards_fixed_L1_checker_names_its_mistakes():
    ns = chapter_namespace("compiled_backwards.ipynb", "check_fixed_L1")
    check, aot_function, as_is = ns["check_fixed_L1"], ns["aot_function"], ns["as_is"]
    compiled_exp, exp_total = ns["compiled_exp"], ns["exp_total"]

    def eager_L1(x):  # right values, but nothing compiled
        (first,) = torch.autograd.grad(exp_total(x), [x], create_graph=True)
        return (x * first).sum()

    last_step = aot_function(lambda x, first: (x * first).sum(), as_is, as_is)

    def only_the_last_step_compiled(x):  # the first gradient still comes
        (first,) = torch.autograd.grad(  # out of a compiled backward
            compiled_exp(x), [x], create_graph=True
        )
        return last_step(x, first)

    assert "not the output of a compiled function" in says(check, eager_L1)
    assert "The alarm fires" in says(check, only_the_last_step_compiled)
    opening_wrapped = aot_function(ns["opening_L1"], as_is, as_is)
    assert "not (1 + x) e^x" in says(check, opening_wrapped)  # partial
    assert "Correct" in says(check, ns["fixed_L1"])


@pytest.mark.timeout(120)
def test_specialise_drops_a_known_zero_only_from_a_plain_addition():
    ns = chapter_namespace("compiled_known_zeros.ipynb", "specialise")
    aten, specialise = ns["aten"], ns["specialise"]

    def addition(y_shape, **kwargs):
        # backward(x, y) = (x + y,), with shapes where a partition records them
        graph = torch.fx.Graph()
        x, y = graph.placeholder("x"), graph.placeholder("y")
        total = graph.call_function(aten.add.Tensor, (x, y), kwargs)
        x.meta["val"], y.meta["val"] = torch.zeros(3), torch.zeros(y_shape)
        total.meta["val"] = torch.zeros(3)
        graph.output((total,))
        return torch.fx.GraphModule(torch.nn.Module(), graph)

    y = torch.tensor([1.0, 2.0, 3.0])
    (plain,) = specialise(addition((3,)), {"x"})(None, y)
    assert plain is y  # 0 + y is y itself
    with pytest.raises(NotImplementedError):  # 0 + 2 * y is not y
        specialise(addition((3,), alpha=2), {"x"})
    with pytest.raises(NotImplementedError):  # y would keep its shape ()
        specialise(addition(()), {"x"})


@pytest.mark.timeout(60)
def test_gradients_of_gradients_checkers_need_only_the_set_up_cell():
    """A reader who opens the exercises first runs the set-up cell and the checker: each
    checker defines its own inputs, so it answers without any other cell of the chapter."""
    notebook = nbformat.read(BOOK / "simple_grad_3_gradients_of_gradients.ipynb", as_version=4)
    set_up = next(cell for cell in notebook.cells if "hide-cell" in cell.metadata.get("tags", []))
    namespace = {"display": lambda *args, **kwargs: None, "__name__": "chapter"}
    for cell in notebook.cells:
        defines_a_checker = cell.source.startswith(
            ("def check_third_order", "def check_pruning")
        ) or "def check_hyperbolic" in cell.source
        if cell is set_up or defines_a_checker:
            source = "\n".join(
                line for line in cell.source.splitlines() if not line.startswith("%")
            )
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, "chapter cell", "exec"), namespace)
    assert {"check_third_order", "check_pruning", "check_hyperbolic"} <= set(namespace)
    assert "a_t" not in namespace and "simple" not in namespace
    assert "Asked for a alone it ran 5 rules" in says(namespace["check_pruning"], namespace["grad"])
    assert "Return two Variables" in says(namespace["check_third_order"], lambda a, b: None)
    nothing = functools.partial(namespace["check_hyperbolic"], operator_cosh=None)
    assert "operator_sinh or its backward fails" in says(nothing, lambda x: None)
