"""The guard rails live in their own module and are installed into an engine's namespace: every
global their copies read is there, each engine gets bookkeeping of its own, installing twice adds
no second check, and a namespace that is not an engine's is refused with a clear message."""
import builtins
import dis
import importlib.util

import pytest
import torch

from gradbook import simple_grad, simple_grad_guard_rails as guard_rails
from gradbook.simple_grad_guard_rails import install_guard_rails

BOOKKEEPING = {
    "_tape_epoch", "_names_given", "_serials", "_serial_named", "_shape_named",
    "_rule_of_tensor",
}


def globals_read(code):
    """Names a code object and the functions it creates load or store as globals."""
    names = {
        instruction.argval
        for instruction in dis.get_instructions(code)
        if instruction.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL")
    }
    for constant in code.co_consts:
        if hasattr(constant, "co_code"):
            names |= globals_read(constant)
    return names


def fresh_engine():
    """A second copy of gradbook.simple_grad, with a namespace of its own."""
    spec = importlib.util.spec_from_file_location("simple_grad_copy", simple_grad.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_global_the_copies_read_is_provided():
    provided = (
        set(guard_rails.ENGINE_NAMES)
        | BOOKKEEPING
        | {function.__name__ for function in guard_rails._INSTALLED}
        | {"torch", "functools"}
        | set(dir(builtins))
    )
    functions = [*guard_rails._INSTALLED, guard_rails._put_around_the_engine]
    read = set().union(*(globals_read(function.__code__) for function in functions))
    assert read - provided == set()
    assert all(name in vars(simple_grad) for name in read - set(dir(builtins)))


def test_the_engine_module_runs_the_checks_in_its_own_namespace():
    assert simple_grad._require_tensor.__globals__ is vars(simple_grad)
    assert simple_grad.grad.__wrapped__.__module__ == "gradbook.simple_grad"
    with pytest.raises(TypeError, match="a Variable wraps a torch.Tensor, not a float"):
        simple_grad.Variable(1.0)


def test_two_engines_keep_apart_and_installing_again_adds_no_check():
    other = fresh_engine()
    simple_grad.reset_tape()
    other.reset_tape()
    simple_grad.Variable.constant(torch.tensor([1.0]), name="a")
    other.Variable.constant(torch.tensor([2.0]), name="a")  # its own names
    with pytest.raises(ValueError, match="already in use on this tape"):
        other.Variable.constant(torch.tensor([3.0]), name="a")
    install_guard_rails(vars(other))
    for name in ("operator_mul", "grad", "reset_tape"):
        wrapped = getattr(other, name).__wrapped__
        assert not hasattr(wrapped, "__wrapped__"), name
    assert not hasattr(other.Variable.__init__.__wrapped__, "__wrapped__")
    other.reset_tape()
    a = other.Variable.constant(torch.tensor([1.0, 2.0]), name="a")
    with pytest.raises(ValueError, match="do not broadcast"):
        a * other.Variable.constant(torch.tensor([1.0]), name="b")
    (da,) = other.grad((a * a).sum(), [a])
    torch.testing.assert_close(da.value, torch.tensor([2.0, 4.0]))


def test_a_namespace_that_is_not_an_engine_is_refused():
    with pytest.raises(TypeError, match=r"a dict such as globals\(\), not a module"):
        install_guard_rails(simple_grad)
    with pytest.raises(ValueError, match="the namespace has no Variable, gradient_tape"):
        install_guard_rails({"grad": None})


def test_a_plain_value_or_a_none_is_refused_with_its_remedy():
    # wrapping is right for an input of the program and wrong for a value a
    # backward rule computed (it would cut the second derivative): the
    # message must tell the two apart
    simple_grad.reset_tape()
    ones = torch.ones(2, dtype=torch.float64)
    x = simple_grad.Variable.constant(ones, "plain_value_test")
    with pytest.raises(TypeError) as refused:
        x * ones
    message = str(refused.value)
    assert "operator * got a Tensor where a Variable was expected" in message
    assert "An input of the program: wrap it with Variable.constant" in message
    assert "compute it with Variable operations" in message
    simple_grad.reset_tape()
    with pytest.raises(TypeError, match="a known zero arrives as None; test for None"):
        x * None
    simple_grad.reset_tape()


def test_a_tensor_a_rule_returned_is_refused_naming_that_rule():
    # a rule that returns a plain tensor: where that tensor meets another
    # gradient, the advice for an input ("wrap it") would point the wrong
    # way, so the message names the rule and says what it must return
    simple_grad.reset_tape()
    with simple_grad.quiet_trace():
        a = simple_grad.Variable.constant(torch.tensor([1.0, 2.0]), "rule_test_a")
        r = simple_grad.Variable(a.value * 2)
        simple_grad.gradient_tape.append(
            simple_grad.TapeEntry([a.name], [r.name], lambda d: [d[0].value * 2])
        )
        loss = (r + a * a).sum()
        for_a_rule = f"returned by the rule of {r.name} = f(rule_test_a)"
        with pytest.raises(TypeError) as refused:
            simple_grad.grad(loss, [a])
    message = str(refused.value)
    assert for_a_rule in message
    assert "return Variables, computed with Variable operations" in message
    assert "wrap it with Variable.constant" not in message
    assert simple_grad._rule_of_tensor == {}  # forgotten once grad is done
    simple_grad.reset_tape()
