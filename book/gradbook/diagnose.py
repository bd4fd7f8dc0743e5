"""Say in plain words what is wrong with a custom autograd Function (for self-checking exercises)."""
import inspect
import textwrap

import torch
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

from .checks import _check_inputs

# Errors a broken backward typically raises, and what each usually means.
_HINTS = (
    ("not enough values to unpack", "backward unpacks more tensors from ctx.saved_tensors than forward saved"),
    ("incorrect number of gradients", "backward must return one gradient per forward input (None for a non-tensor one)"),
    ("invalid gradient at index", "a gradient does not have the shape of its input"),
    ("different than None", "the gradient of a non-tensor input must be None"),
    ("leaf Variable that requires grad is being used in an in-place",
     "backward most likely writes into grad_output, which requires grad in a double backward: "
     "compute a new tensor instead (grad_output * mask, grad_output.clone())"),
)


def find_problems(function_class, reference, *arguments):
    """Return a list of plain-words problems with ``function_class`` (see ``_find_problems``).

    The checks draw random numbers (gradgradcheck's incoming gradients, a probe's); the caller's
    random state is restored afterwards, so a notebook's later random inputs do not depend on
    whether it ran the checker."""
    with torch.random.fork_rng(devices=[]):
        return _find_problems(function_class, reference, *arguments)


def _find_problems(function_class, reference, *arguments):
    """Return a list of plain-words problems with ``function_class``; an empty list means none found.

    ``reference`` computes the same mathematical function with ordinary PyTorch operations.
    ``arguments`` are what ``apply`` takes: the tensors among them must be float64 and require
    grad (the checks run on copies, so they are never changed); other arguments (a Python
    number, say) are passed as they are to both functions. The checks run in order: both methods
    are static, an in-place forward marks its input dirty, forward agrees with ``reference``,
    ``gradcheck``, then ``gradgradcheck``. A failing step stops the later ones, since their
    verdicts would only repeat it. Tensors kept on ctx as attributes (or in a list, tuple or dict
    there), a backward that writes into
    its grad_output, an output that is a view of an input, a backward that fails on a strided
    (transposed) incoming gradient and a gradient in another dtype than its input's are
    reported along the way.
    Finite differences average the slopes on both sides of a point, so ``gradcheck`` or
    ``gradgradcheck`` can fail a right Function where a derivative jumps (ReLU at 0 fails the first, ``abs`` at 0 the second); when a failing order agrees with
    the reference's derivative for a random incoming gradient (at order 2, with respect to the
    inputs and to that incoming gradient), the verdict says so.
    """
    if not (isinstance(function_class, type) and issubclass(function_class, torch.autograd.Function)):
        raise TypeError(
            "find_problems: pass the Function class itself (a subclass of torch.autograd.Function), "
            f"not {type(function_class).__name__}; it calls .apply for you."
        )
    if not callable(reference):
        raise TypeError("find_problems: reference must be a function computing the expected result.")
    if not any(isinstance(argument, torch.Tensor) for argument in arguments):
        raise TypeError("find_problems: pass at least one input tensor after the reference.")
    inputs = tuple(a for a in arguments if isinstance(a, torch.Tensor))
    _check_inputs(inputs, caller="find_problems")
    apply = _on_tensors(function_class.apply, arguments)
    reference = _on_tensors(reference, arguments)

    problems = [
        f"{name} is not a @staticmethod: harmless on this PyTorch (.apply looks it up on the "
        "class and passes ctx first), but PyTorch documents forward and backward as static "
        "methods; add the decorator."
        for name in ("forward", "backward")
        if not isinstance(inspect.getattr_static(function_class, name, None), staticmethod)
    ]
    # Copies, so that a forward that writes into its input never changes the caller's tensors.
    inputs = tuple(x.detach().clone().requires_grad_() for x in inputs)
    in_place_problem, function = _in_place(apply, inputs)
    if in_place_problem:
        return problems + [in_place_problem]
    forward_problem = _forward_problem(function, reference, inputs)
    if forward_problem:
        return problems + [forward_problem]
    problems += _state_problems(function, inputs)
    dtype_problem = _gradient_dtype_problem(function, inputs)
    if dtype_problem:
        problems.append(dtype_problem)
    first_order = _check_problem(gradcheck, function, inputs)
    if first_order:
        disagrees, description = first_order
        if disagrees and dtype_problem:
            description += " (the rounding above may be why)"
        elif disagrees and _agrees_with_reference(function, reference, inputs, order=1):
            description += (
                ", but backward agrees with the reference's gradient: an input where the "
                "derivative jumps (finite differences there average the slopes on both sides)? "
                "check such points against the reference's gradient, not with gradcheck"
            )
        return problems + [f"first derivatives: {description}"]
    second_order = _check_problem(gradgradcheck, function, inputs)
    if second_order:
        disagrees, description = second_order
        if disagrees and dtype_problem:
            description += " (the rounding above may be why)"
        elif disagrees and _agrees_with_reference(function, reference, inputs, order=2):
            description += (
                ", but double backward agrees with the reference's: an input where the first "
                "derivative jumps (abs at 0, say)? check such points against the reference's "
                "second derivative, not with gradgradcheck"
            )
        elif disagrees:
            description += (
                "; first derivatives are right, so backward most likely computes with a tensor "
                "autograd cannot trace to the inputs (kept on ctx, or an intermediate passed to "
                "save_for_backward) or cuts the incoming gradient off (grad_output.detach(), "
                "NumPy)"
            )
        problems.append(f"second derivatives (double backward): {description}")
    return problems


def _on_tensors(function, arguments):
    """``function`` as a function of the tensors among ``arguments`` only, the others bound."""
    def call(*tensors):
        supply = iter(tensors)
        return function(*(next(supply) if isinstance(a, torch.Tensor) else a for a in arguments))

    return call


def _in_place(apply, inputs):
    """(a problem or None, the function the later checks call).

    Forward runs on copies that are not leaves, since in place on a leaf that requires grad
    raises; a copy whose version counter moved was changed in place. A marked in-place Function
    is then checked through ``apply`` on fresh copies, as a reader would call it."""
    copies = [x.clone() for x in inputs]
    try:
        output = apply(*copies)
    except Exception:
        return None, apply  # _forward_problem reports the error
    changed = [copy for copy in copies if copy._version > 0]
    if not changed:
        return None, apply
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    if not all(any(o is copy for o in outputs) for copy in changed):
        return (
            "forward changes its input in place without ctx.mark_dirty (or without returning "
            "that input): autograd still treats the input as unchanged, so gradients through "
            "it are silently wrong; call ctx.mark_dirty on it and return it"
        ), None

    def apply_to_copies(*tensors):
        return apply(*(tensor.clone() for tensor in tensors))

    return None, apply_to_copies


def _agrees_with_reference(function, reference, inputs, order):
    """Whether ``function``'s derivatives of this order agree with ``reference``'s.

    The incoming gradients are random, not ones: a backward that ignores its grad_output
    agrees with the reference under a ``.sum()`` loss, and must not pass for a kink. At order 2
    the incoming gradient requires grad and is differentiated too (the path a gradient penalty
    takes, and gradgradcheck checks): a backward that cuts it off from autograd
    (``grad_out.detach()``, NumPy) is right with respect to the inputs alone."""
    def derivatives(f, incoming, outer):
        output = f(*inputs)
        grads = torch.autograd.grad(output, inputs, incoming, create_graph=order == 2,
                                    allow_unused=True)
        if order == 1:
            return grads
        paths = [(g * w).sum() for g, w in zip(grads, outer) if g is not None and g.requires_grad]
        if not paths:
            return tuple(None for _ in (*inputs, incoming))
        return torch.autograd.grad(sum(paths), (*inputs, incoming), allow_unused=True)

    try:
        output = function(*inputs)
        incoming = (torch.rand_like(output) + 0.5).requires_grad_(order == 2)
        outer = [torch.rand_like(x) + 0.5 for x in inputs]
        got = derivatives(function, incoming, outer)
        right = derivatives(reference, incoming, outer)
    except Exception:
        return False
    return all(
        (g is None and r is None) or (g is not None and r is not None and torch.allclose(g, r))
        for g, r in zip(got, right)
    )


def _gradient_dtype_problem(function, inputs):
    """A backward that returns a gradient in another dtype than its input's, or None.

    The engine casts such a gradient to the input's dtype before anyone sees it, so the
    Function's own backward is called directly, with its node as ctx, to see what it returns.
    float32 rounding then fails gradcheck or gradgradcheck on a smooth function."""
    try:
        output = function(*inputs)
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        node = next(o.grad_fn for o in outputs if isinstance(o, torch.Tensor))
        incoming = [torch.ones_like(o) if isinstance(o, torch.Tensor) else None for o in outputs]
        grads = node._forward_cls.backward(node, *incoming)
    except Exception:
        return None  # not a Function's node, or a backward that raises: gradcheck reports it
    grads = grads if isinstance(grads, (tuple, list)) else (grads,)
    for x, g in zip(inputs, grads):
        if isinstance(g, torch.Tensor) and g.dtype != x.dtype:
            return (
                f"backward returns a {_dtype_name(g)} gradient for a {_dtype_name(x)} input: "
                "autograd casts it back, but its values keep the rounding, which can fail "
                "gradcheck or gradgradcheck on a smooth function; compute the gradient in the "
                "input's dtype"
            )
    return None


def _dtype_name(tensor):
    return str(tensor.dtype).removeprefix("torch.")


def _forward_problem(function, reference, inputs):
    try:
        output = function(*inputs)
    except Exception as error:
        return f"forward raised {_describe(error)}"
    if output is None:
        return "forward returned None: some path through it ends without a return statement"
    try:
        torch.testing.assert_close(output, reference(*inputs))
    except AssertionError:
        return "forward does not compute the same values as the reference"
    return None


def _state_problems(function, inputs):
    """Tensors kept on ctx as attributes, a backward that writes into its grad_output, an
    output that is a view of an input, and a backward that fails on a strided gradient.

    None shows in gradcheck: each gives right first derivatives on a simple loss."""
    problems = []
    output = function(*inputs)  # _forward_problem has run it without error
    if isinstance(output, (tuple, list)):
        output = next((o for o in output if isinstance(o, torch.Tensor)), None)
    if output is None or output.grad_fn is None:
        return problems
    kept = _kept_on_ctx(function, inputs, output.grad_fn)
    if kept:
        # An input, or an output once apply has returned, requires grad: it has history. An
        # intermediate computed in forward (which runs without grad) has none.
        untraced = [name for name, tensor in kept.items() if not tensor.requires_grad]
        reasons = "they escape the in-place check and saved-tensor hooks"
        if untraced:
            verb = "has" if len(untraced) == 1 else "have"
            reasons += f", and {', '.join(untraced)} {verb} no history for a second backward"
        if any(tensor is output for tensor in kept.values()):
            reasons += ("; an output kept there also makes a reference cycle (ctx holds it, "
                        "it holds ctx)")
        problems.append(
            f"tensors that change with the inputs kept on ctx as attributes ({', '.join(kept)}): "
            f"{reasons}; save inputs or outputs with ctx.save_for_backward, recompute the rest "
            "in backward"
        )
    grad_output = torch.rand_like(output) + 0.5
    try:
        torch.autograd.grad(output, inputs, grad_output, allow_unused=True)
    except Exception:
        return problems  # gradcheck reports a backward that raises
    # The version counter moves on any in-place write, even one that leaves the values as they
    # were (a mask that happens to select nothing for these inputs).
    if grad_output._version > 0:
        problems.append(
            "backward writes into grad_output, a tensor autograd may also pass to other "
            "branches of the graph: compute a new tensor instead (grad_output * mask, "
            "grad_output.clone())"
        )
    if any(_shares_memory(output, x) for x in inputs):
        problems.append(
            "an output is a view of an input (it shares the input's memory): a caller that "
            "changes it in place gets an error, since autograd's rules for views would replace "
            "the Function's backward; return a copy (x[:2].clone(), not x[:2])"
        )
    strided_problem = _strided_gradient_problem(function, inputs, output)
    if strided_problem:
        problems.append(strided_problem)
    return problems


def _shares_memory(output, x):
    return output.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def _strided_gradient_problem(function, inputs, output):
    """A backward that fails on an incoming gradient that is not contiguous, or None.

    The engine passes a gradient on as it comes, so after a transpose (``y.t()`` in the loss)
    it arrives strided; ``.view`` on it then raises where ``.reshape`` would copy. Only an
    output of two dimensions or more is probed: a transposed layout needs them."""
    if output.dim() < 2 or not output.is_floating_point():
        return None
    order = tuple(reversed(range(output.dim())))
    strided = (torch.rand(output.shape[::-1], dtype=output.dtype) + 0.5).permute(order)
    first = function(*inputs)
    if isinstance(first, (tuple, list)):
        first = next(o for o in first if isinstance(o, torch.Tensor))
    try:
        torch.autograd.grad(first, inputs, strided, allow_unused=True)
    except Exception as error:
        return (
            f"backward raised {_describe(error)} on an incoming gradient that is not "
            "contiguous (as after a transpose), though it ran on a contiguous one: .view on "
            "grad_output is the usual cause; use .reshape, which copies when it must"
        )
    return None


def _tensors_on(node):
    """The tensors on ``node`` (the ctx) by name, including those one level inside a list,
    tuple or dict attribute (``cache[0]``, ``parts['scale']``): a container hides a tensor
    from the in-place check and the hooks just as an attribute does."""
    found = {}
    for name, value in vars(node).items():
        if isinstance(value, torch.Tensor):
            found[name] = value
        elif isinstance(value, (list, tuple)):
            found.update((f"{name}[{i}]", item) for i, item in enumerate(value)
                         if isinstance(item, torch.Tensor))
        elif isinstance(value, dict):
            found.update((f"{name}[{key!r}]", item) for key, item in value.items()
                         if isinstance(item, torch.Tensor))
    return found


def _kept_on_ctx(function, inputs, node):
    """The tensors on ``node`` (the ctx), by name, that change when the inputs do.

    A tensor that comes out the same for shifted inputs is a constant: it has no history to
    lose, so it is not reported."""
    kept = _tensors_on(node)
    if not kept:
        return {}
    try:
        shifted = function(*((x.detach() * 1.1 + 0.1).requires_grad_() for x in inputs))
        if isinstance(shifted, (tuple, list)):
            shifted = next(o for o in shifted if isinstance(o, torch.Tensor))
        again = _tensors_on(shifted.grad_fn) if shifted.grad_fn is not None else {}
    except Exception:
        again = {}
    return {
        name: value for name, value in sorted(kept.items())
        if not (isinstance(again.get(name), torch.Tensor) and again[name].shape == value.shape
                and torch.equal(again[name], value))
    }


def _check_problem(check, function, inputs):
    """None when ``check`` passes; otherwise (whether it disagreed with finite differences,
    a description), so that callers never have to parse the description."""
    try:
        check(function, inputs)
    except GradcheckError:
        return True, "they disagree with finite differences"
    except Exception as error:
        return False, f"backward raised {_describe(error)}"
    return None


def _describe(error):
    lines = str(error).strip().splitlines()
    first_line = lines[0] if lines else ""
    description = f"{type(error).__name__} ({first_line})"
    for fragment, hint in _HINTS:
        if fragment in first_line:
            if fragment == "not enough values to unpack" and "got 0)" not in first_line:
                # some were saved: the usual slip is a second save_for_backward call
                hint += (" (a second ctx.save_for_backward call replaces what the first saved: "
                         "save them all in one call)")
            return f"{description}: {hint}"
    return description


def penalty_problems(function, reference, x, split_style=False):
    """Plain-words problems with ``function`` under a gradient penalty; an empty list means none.

    ``function`` is what the reader wrote (a Function's ``apply``, or a small function around
    it), ``reference`` the same mathematical function in ordinary PyTorch operations, and ``x``
    a float64 tensor that requires grad. The loss is ``sum(f(x)²)``, so that the gradient
    entering the Function's backward requires grad (the case where a backward autograd cannot
    trace goes wrong silently rather than loudly); the penalty is the squared norm of its
    gradient, and the gradient of ``loss + penalty`` is compared with the reference's. The
    checks run in order: the values, gradcheck, the penalty's gradient (does it raise? does it
    agree with the reference's?), then gradgradcheck; the first that fails stops the later ones.
    A gradgradcheck that disagrees with finite differences while the penalty agrees may mean
    an x where the first derivative jumps; one that raised is an error in backward.

    With ``split_style=True``, ``function`` must be a Function's own ``apply``, and a Function
    without a ``setup_context`` (the combined style, ``ctx`` first in ``forward``) is a
    problem before any other check runs.
    """
    if not callable(function) or not callable(reference):
        raise TypeError(
            "penalty_problems: pass the function to check and a reference function, e.g. "
            "penalty_problems(Softplus.apply, torch.nn.functional.softplus, x)."
        )
    _check_inputs((x,), caller="penalty_problems")
    if split_style and not _has_setup_context(function):
        return ["the Function is in the combined style (ctx first in forward): write forward "
                "without ctx and save what backward needs in a setup_context static method"]
    try:
        values = function(x)
    except Exception as error:
        return [f"calling the function raised {_describe(error)}"]
    if not isinstance(values, torch.Tensor) or values.shape != x.shape:
        return ["the function must return one tensor of the input's shape (for a Function with "
                "extra outputs, pass a small function that returns the first)"]
    if not torch.allclose(values, reference(x)):
        return ["the values differ from the reference's"]
    first_order = _check_problem(gradcheck, function, (x,))
    if first_order:
        return [f"first derivatives: {first_order[1]}"]
    got = _penalty_gradient(function, x)
    right = _penalty_gradient(reference, x)
    if isinstance(got, str):
        return [f"the penalty's gradient raised {got}"]
    second_order = _check_problem(gradgradcheck, function, (x,))
    untraceable = (
        "backward computes with a tensor autograd cannot trace to x (kept on ctx, an "
        "intermediate computed in forward or setup_context, a .detach(), NumPy, or a backward "
        "under @once_differentiable): save inputs or outputs and recompute the rest inside "
        "backward"
    )
    if not torch.allclose(got, right):
        return [
            f"second derivatives: the penalty's gradient is wrong without an error "
            f"({_rounded(got)}, right {_rounded(right)}); first derivatives are right, so "
            + untraceable
        ]
    if second_order and not second_order[0]:
        return [f"second derivatives: gradgradcheck fails ({second_order[1]})"]
    if second_order:
        return [
            f"second derivatives: gradgradcheck fails ({second_order[1]}), though the "
            "penalty's gradient agrees with the reference's at this x: an x where the first "
            "derivative jumps (abs at 0, say), where finite differences fail a right "
            "Function? if not, " + untraceable
        ]
    return []


def _has_setup_context(function):
    """Whether ``function``, a Function's ``apply``, belongs to a class that defines
    ``setup_context`` (itself or a parent below ``torch.autograd.Function``)."""
    owner = getattr(function, "__self__", None)
    if not (isinstance(owner, type) and issubclass(owner, torch.autograd.Function)):
        raise TypeError(
            "penalty_problems: split_style=True needs a Function's own apply (such as "
            f"LogSigmoid.apply) to read its style; got {function!r}."
        )
    base = set(torch.autograd.Function.__mro__)
    return any("setup_context" in vars(cls) for cls in owner.__mro__ if cls not in base)


def _penalty_gradient(function, x):
    """The gradient of sum(f(x)²) + |its gradient|², or the description of the error raised."""
    x = x.detach().requires_grad_()
    try:
        loss = function(x).pow(2).sum()
        (gradient,) = torch.autograd.grad(loss, x, create_graph=True)
        (total,) = torch.autograd.grad(loss + gradient.pow(2).sum(), x)
    except Exception as error:
        return _describe(error)
    return total


def _rounded(tensor):
    return [round(value, 4) for value in tensor.flatten().tolist()[:3]]


def outcomes(cases, width=79):
    """Run each case and print one line for it: its result, or its error's first sentence.

    ``cases`` maps a name to a function of no arguments. A result that is a tensor is printed
    as a list; a RuntimeError or TypeError (what autograd and Python raise for a broken
    Function) is caught and printed as ``Type: first sentence``; any other error propagates,
    since it is a mistake in the case, not in the Function it runs. Lines are wrapped to
    ``width`` columns. Returns the dict of what was printed for each name."""
    if not isinstance(cases, dict) or not all(callable(run) for run in cases.values()):
        raise TypeError("outcomes: pass a dict from a name to a function of no arguments, "
                        "e.g. {'FirstTwo': lambda: changed_in_place(FirstTwo)}.")
    if isinstance(width, bool) or not isinstance(width, int) or width < 20:
        raise ValueError(f"outcomes: width={width!r}; pass a whole number of columns, 20 or more.")
    found = {}
    for name, run in cases.items():
        try:
            result = run()
            found[name] = result.tolist() if isinstance(result, torch.Tensor) else result
        except (RuntimeError, TypeError) as error:
            lines = str(error).strip().splitlines()
            sentence = (lines[0] if lines else "").split(". ")[0]
            found[name] = f"{type(error).__name__}: {sentence}"
        print(textwrap.fill(f"{name}: {found[name]}", width, subsequent_indent="    "))
    return found
