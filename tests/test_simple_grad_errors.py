"""Simple Grad refuses bad input with a message that names the mistake and the fix."""
import weakref

import pytest
import torch

from gradbook.simple_grad import Variable, grad, quiet_trace, reset_tape


@pytest.fixture
def quiet():
    """The engine prints its trace; the tests only read the errors."""
    with quiet_trace():
        reset_tape()
        yield


def vector(name, *values):
    return Variable.constant(torch.tensor(values, dtype=torch.float64), name=name)


@pytest.mark.parametrize(
    "operation",
    [
        lambda a: a * 2.0,
        lambda a: 2.0 * a,
        lambda a: a + torch.ones(3, dtype=torch.float64),
        lambda a: torch.ones(3, dtype=torch.float64) * a,
    ],
    ids=["variable * float", "float * variable", "variable + tensor", "tensor * variable"],
)
def test_a_plain_operand_must_be_wrapped(quiet, operation):
    a = vector("a", 1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match=r"got a (float|Tensor).*Variable\.constant"):
        operation(a)


def test_a_variable_wraps_a_tensor(quiet):
    with pytest.raises(TypeError, match=r"not a float.*torch\.tensor\(2\.0\)"):
        Variable.constant(2.0, name="c")


def test_a_str_is_refused_as_a_value_and_as_grads_inputs(quiet):
    # a name written where the value goes, or where the list of Variables goes
    with pytest.raises(TypeError, match=r"not a str \('a'\): a name goes after"):
        Variable.constant("a")
    a = vector("a", 1.0, 2.0)
    with pytest.raises(TypeError, match=r"not names: write grad\(L, \[x\]\).*'a'"):
        grad((a * a).sum(), "a")


def test_operands_of_different_shapes_are_refused(quiet):
    a, c = vector("a", 1.0, 2.0, 3.0), Variable.constant(torch.tensor(2.0), name="c")
    with pytest.raises(ValueError, match=r"a \* c: the shapes \(3,\) and \(\).*\.expand"):
        a * c


def test_the_loss_must_be_a_scalar(quiet):
    a, b = vector("a", 1.0, 2.0), vector("b", 3.0, 4.0)
    product = a * b
    with pytest.raises(ValueError, match=rf"scalar loss.*{product.name}.*\(2,\).*\.sum\(\)"):
        grad(product, [a, b])


def test_desired_results_come_as_a_list(quiet):
    a = vector("a", 1.0, 2.0)
    with pytest.raises(TypeError, match=r"grad\(L, \[a\]\)"):
        grad((a * a).sum(), a)


def test_a_loss_from_before_reset_tape_is_named(quiet):
    a = vector("a", 1.0, 2.0)
    stale = (a * a).sum(name="L0")
    reset_tape()
    with pytest.raises(ValueError, match=r"L0 is not on the tape.*reset_tape\(\)"):
        grad(stale, [a])


def test_a_stale_value_is_caught_even_when_its_name_is_reused(quiet):
    a = vector("a", 1.0, 2.0)
    stale = a * a  # v0
    reset_tape()
    fresh = a * a  # v0 again, on the new tape
    assert fresh.name == stale.name
    with pytest.raises(ValueError, match=r"v0 is not on the tape"):
        grad(fresh.sum(), [stale])


@pytest.mark.parametrize("use", [
    lambda t, a: t * a,
    lambda t, a: a + t,
    lambda t, a: t.sum(),
], ids=["mul", "add", "sum"])
def test_a_value_from_before_reset_tape_is_refused_as_an_operand(quiet, use):
    """Its entry went with the old tape: as an operand it would silently count as a
    constant (d/da of (a*a)*a would lose the paths through a*a)."""
    a = vector("a", 1.0, 2.0)
    stale = (a * a).sum(name="S").expand(2)  # a non-leaf with a fresh name
    reset_tape()
    with pytest.raises(ValueError, match=r"v\d+ is not on the tape.*reset_tape\(\)"):
        use(stale, a)


def test_a_named_value_from_before_reset_tape_is_refused_as_an_operand(quiet):
    a = vector("a", 1.0, 2.0)
    stale = (a * a).sum(name="S")
    reset_tape()
    with pytest.raises(ValueError, match=r"operator \*: S is not on the tape"):
        stale * a.sum()


def test_a_value_no_operator_recorded_is_named(quiet):
    a = vector("a", 1.0, 2.0)
    unrecorded = Variable(a.value * 2, name="t")  # made by hand, no TapeEntry
    loss = (a * a).sum()
    with pytest.raises(ValueError, match=r"t is not on the tape.*TapeEntry"):
        grad(loss, [unrecorded])


def test_leaves_made_before_reset_tape_are_still_inputs(quiet):
    """Constants are not computed on a tape, so they stay valid across reset_tape()."""
    a, b = vector("a", 1.0, 2.0), vector("b", 3.0, 4.0)
    reset_tape()
    da, db = grad((a * a).sum(), [a, b])
    torch.testing.assert_close(da.value, 2 * a.value)
    assert db is None


def test_only_a_scalar_can_be_expanded(quiet):
    a = vector("a", 1.0, 2.0)
    with pytest.raises(ValueError, match=r"a\.expand\(2, 3\): only a scalar.*\(2,\).*a\.sum\(\)"):
        a.expand((2, 3))


def test_expand_takes_a_shape_as_torch_does(quiet):
    s = vector("a", 1.0, 2.0).sum(name="s")
    assert s.expand(2, 3).value.shape == s.expand((2, 3)).value.shape == (2, 3)
    assert s.expand(3).value.shape == (3,)
    with pytest.raises(TypeError, match=r"s\.expand\(2\.5\): give the new shape as ints"):
        s.expand(2.5)
    with pytest.raises(TypeError, match=r"s\.expand\(\(2, 'x'\)\): give the new shape"):
        s.expand(2, "x")
    for sizes in ((-1,), (3, -2)):  # torch itself says "integer multiplication overflow"
        with pytest.raises(ValueError, match=r"s\.expand\(.*\): give the new shape as ints, 0 or more"):
            s.expand(*sizes)
    assert s.expand(0).value.shape == (0,)  # no elements is a size


@pytest.mark.timeout(10)
def test_two_values_cannot_share_a_name(quiet):
    # gradients are filed by name: a leaf named like a fresh name, or two leaves
    # named alike, would silently share one gradient (x * x gave 3 instead of 2)
    with pytest.raises(ValueError, match=r"'v0' is the form of the engine's own"):
        vector("v0", 1.0, 1.0, 1.0)
    vector("a", 1.0)
    with pytest.raises(ValueError, match=r"'a' is already in use on this tape"):
        vector("a", 2.0)
    reset_tape()
    vector("a", 3.0)  # a new tape: the name is free again


@pytest.mark.timeout(10)
def test_desired_results_may_come_from_a_generator(quiet):
    a, b = vector("a", 1.0, 2.0), vector("b", 3.0, 4.0)
    L = (a * b).sum()
    gradients = grad(L, (x for x in (a, b)))
    assert [g.value.tolist() for g in gradients] == [[3.0, 4.0], [1.0, 2.0]]


@pytest.mark.timeout(10)
def test_a_kept_leaf_cannot_meet_a_new_value_with_its_name(quiet):
    # reset_tape() frees the names given, but a leaf kept across it still has
    # its name: a new leaf "a" (or a fresh v0) beside it would share its
    # gradient, and grad(a_old * a_new) gave [11, 22] instead of [10, 20]
    a_old = vector("a", 1.0, 2.0)
    reset_tape()
    a_new = vector("a", 10.0, 20.0)
    with pytest.raises(ValueError, match=r"two different values are named 'a'.*reset_tape\(\)"):
        a_old * a_new
    with pytest.raises(ValueError, match=r"grad: two different values are named 'a'"):
        grad((a_new * a_new).sum(), [a_old])
    reset_tape()
    unnamed_old = Variable.constant(torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert unnamed_old.name == "v0"
    reset_tape()
    with pytest.raises(ValueError, match=r"two different values are named 'v0'"):
        unnamed_old * unnamed_old  # its result would be the new tape's v0


@pytest.mark.timeout(10)
def test_a_kept_unnamed_leaf_meets_the_new_v0_after_it_was_freed(quiet):
    # v0 = x + y is read only by +, whose rule keeps nothing, so it is freed at once.
    # A record that forgot freed values let old (also v0) share its gradient:
    # dL/dx came out [13, 18] instead of torch's [2, 4], with no error.
    old = Variable.constant(torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert old.name == "v0"
    reset_tape()
    x, y = vector("x", 3.0, 4.0), vector("y", 5.0, 6.0)
    s = (x + y) + x
    with pytest.raises(ValueError, match=r"operator \*: two different values are named 'v0'"):
        s * old


@pytest.mark.timeout(10)
def test_grad_refuses_a_kept_leaf_whose_name_a_freed_value_held(quiet):
    # the tape never reads old, yet grad(L, [old]) returned v0's gradient [1, 1]
    old = Variable.constant(torch.tensor([1.0, 2.0], dtype=torch.float64))
    reset_tape()
    x = vector("x", 3.0, 4.0)
    L = (x + x).sum()  # v0 = x + x is freed at once
    with pytest.raises(ValueError, match=r"grad: two different values are named 'v0'"):
        grad(L, [old])


@pytest.mark.timeout(10)
def test_a_kept_named_leaf_meets_a_new_temporary_with_its_name(quiet):
    # the new "a" is read only by +, so it is freed before grad runs; grad(L, [a_old])
    # returned its gradient [1, 1]
    a_old = vector("a", 1.0, 2.0)
    reset_tape()
    b = vector("b", 3.0, 4.0)
    L = (vector("a", 10.0, 20.0) + b * b).sum()
    with pytest.raises(ValueError, match=r"grad: two different values are named 'a'"):
        grad(L, [a_old])


@pytest.mark.timeout(10)
def test_the_record_of_names_keeps_no_value_alive(quiet):
    # a value read only by + or sum is freed when the caller lets go of it: their
    # rules keep no Variable, and the record of names keeps serial numbers
    a = vector("a", 1.0, 2.0)
    for reader in (lambda value: value + a, lambda value: value.sum()):
        value = a * a
        kept = weakref.ref(value)
        result = reader(value)
        del value
        assert kept() is None and result is not None


@pytest.mark.timeout(10)
def test_a_name_is_a_string(quiet):
    with pytest.raises(TypeError, match=r"name=3: a name is a str"):
        Variable.constant(torch.tensor(1.0), name=3)


def test_a_rule_must_return_one_gradient_per_input(quiet):
    """zip would pair a short list with the first inputs and drop the rest silently."""
    from gradbook.simple_grad import TapeEntry, gradient_tape

    a, b = vector("a", 1.0, 2.0), vector("b", 3.0, 4.0)
    r = Variable(a.value * b.value)
    gradient_tape.append(TapeEntry([a.name, b.name], [r.name], lambda d: [d[0] * b]))
    with pytest.raises(ValueError, match=r"returned 1 gradient for 2 inputs"):
        grad(r.sum(), [a, b])


def test_the_count_message_puts_each_noun_in_its_number(quiet):
    """Two gradients for one input: 'gradients' and 'input', not 'inputs'."""
    from gradbook.simple_grad import TapeEntry, gradient_tape

    a = vector("a", 1.0, 2.0)
    r = Variable(a.value * 2.0)
    gradient_tape.append(TapeEntry([a.name], [r.name], lambda d: [d[0], d[0]]))
    with pytest.raises(ValueError, match=r"returned 2 gradients for 1 input: "):
        grad(r.sum(), [a])


def test_a_rule_must_return_a_list(quiet):
    from gradbook.simple_grad import TapeEntry, gradient_tape

    a = vector("a", 1.0, 2.0)
    r = Variable(a.value * 2.0)
    gradient_tape.append(TapeEntry([a.name], [r.name], lambda d: d[0]))
    with pytest.raises(TypeError, match=r"returned a Variable: return a list"):
        grad(r.sum(), [a])


def test_a_rule_must_return_gradients_of_its_inputs_shapes(quiet):
    """A gradient of the wrong shape that goes straight to the input asked for would pass
    silently: the tape keeps names, so the checks keep each name's shape."""
    from gradbook.simple_grad import TapeEntry, gradient_tape

    a = vector("a", 1.0, 2.0)
    r = Variable(a.value.clone())
    gradient_tape.append(TapeEntry([a.name], [r.name], lambda d: [d[0].sum()]))
    with pytest.raises(ValueError, match=r"returned a gradient of shape \(\) for a, of shape \(2,\)"):
        grad(r.sum(), [a])
    reset_tape()  # the right rule, on a new tape, passes
    a = vector("a", 1.0, 2.0)
    r = Variable(a.value.clone())
    gradient_tape.append(TapeEntry([a.name], [r.name], lambda d: [d[0]]))
    (dL_da,) = grad(r.sum(), [a])
    assert dL_da.value.tolist() == [1.0, 1.0]


def test_a_plain_tensor_gradient_of_the_wrong_shape_is_refused(quiet):
    """A rule's plain tensor returned for a leaf meets no operator that would refuse it,
    so the shape check looks at plain tensors too."""
    from gradbook.simple_grad import TapeEntry, gradient_tape

    a = vector("a", 1.0, 2.0)
    r = Variable(a.value.clone())
    gradient_tape.append(
        TapeEntry([a.name], [r.name], lambda d: [torch.ones(3, dtype=a.value.dtype)])
    )
    with pytest.raises(ValueError, match=r"returned a gradient of shape \(3,\) for a, of shape \(2,\)"):
        grad(r.sum(), [a])


def test_grad_gives_the_tape_its_own_entries_back(quiet):
    """The checks run around each rule only while grad runs: afterwards, and after a
    rule that raised, the tape holds the very entries the operators recorded."""
    from gradbook.simple_grad import TapeEntry, gradient_tape

    a = vector("a", 1.0, 2.0)
    L = (a * a).sum(name="L")
    recorded = list(gradient_tape)
    (dL_da,) = grad(L, [a])
    assert dL_da.value.tolist() == [2.0, 4.0]
    assert all(x is y for x, y in zip(gradient_tape, recorded))
    assert len(gradient_tape) > len(recorded)  # grad's own entries follow
    r = Variable(a.value * 2.0)
    wrong = TapeEntry([a.name], [r.name], lambda d: d[0])
    gradient_tape.append(wrong)
    before = list(gradient_tape)
    with pytest.raises(TypeError, match=r"returned a Variable: return a list"):
        grad(r.sum(), [a])
    assert all(x is y for x, y in zip(gradient_tape, before))
    assert gradient_tape[len(before) - 1] is wrong
