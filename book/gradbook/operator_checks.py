"""Checks for the Custom operators chapter: the exercise's checker and the dispatch facts.

``check_operator(op)`` runs every check of the chapter on an operator meant to compute
sinh (``opcheck`` on two dtypes, two shapes and a transposed input, ``gradcheck``,
``gradgradcheck`` and a ``fullgraph`` compile with ``aot_eager``) and prints, for each check
that fails, the first line of its message and advice. tests/test_operator_checks.py feeds it
eight broken operators and asserts the advice it gives for each.

``dispatch_facts(name)`` reads which dispatch keys have a kernel for an operator (a private
listing of the dispatcher) and checks what the chapter's dispatch drawing states: the order
in which the dispatcher tries vmap's, autograd's and the device's keys, and that a fake
tensor reaches the fake through FakeTensorMode, with a context, while a meta tensor reaches
it through the Meta kernel, without one.
"""
import re
import textwrap
import warnings

import torch
from torch.autograd import gradcheck, gradgradcheck

_SETUP_CONTEXT_NAMES = (
    "name setup_context's parameters ctx, inputs, output: PyTorch passes "
    "them by keyword"
)
ADVICE = [  # (the check that failed, or "any"; words of its message, advice)
    ("any", "unexpected keyword argument 'ctx'", _SETUP_CONTEXT_NAMES),
    ("any", "unexpected keyword argument 'inputs'", _SETUP_CONTEXT_NAMES),
    ("any", "unexpected keyword argument 'output'", _SETUP_CONTEXT_NAMES),
    ("any", "no fake impl", "add a fake implementation with register_fake"),
    ("any", "mismatched tensor metadata",
     "derive the fake's result from the inputs: torch.empty_like(x)"),
    ("any", "no autograd formula",
     "register a backward with register_autograd"),
    ("any", "tensor subclasses",
     "the backward calls NumPy: make that an operator"),
    ("gradgradcheck", "Jacobian mismatch",
     "the backward's own derivative is wrong: is a factor detached?"),
    ("any", "Jacobian mismatch",
     "compare the backward's formula with cosh(x)"),
    ("any", "expected to be zero",
     "the backward records nothing: under no_grad, detached, or NumPy?"),
    # an input written by an operator whose schema says it writes nothing
    ("any", "not defined as mutable but was mutated",
     "list the argument it writes in mutates_args, or stop writing it"),
    ("any", "modified by an inplace operation",
     "the operator writes an input: list it in mutates_args"),
]


UNKNOWN = "read the message above"


def advice(check, message):
    """The advice for the first line ``message`` of a failure of ``check``."""
    return next(
        (hint for where, words, hint in ADVICE
         if where in (check, "any") and words in message),
        UNKNOWN,
    )


def _causes(error):
    # the first line of the error and of each error behind it, the root
    # cause last: a compiler wraps the real mistake ("TypeError when making
    # fake tensor call" may be a setup_context with other parameter names)
    lines, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        text = [line for line in str(error).splitlines() if line.strip()]
        if text:
            lines.append(text[0])
        error = error.__cause__ or error.__context__
    return lines


def _root_advice(check, causes):
    # the advice for the deepest cause that has one
    for message in reversed(causes):
        hint = advice(check, message)
        if hint != UNKNOWN:
            return hint, message
    return UNKNOWN, None


def _kernel_problem(op, samples):
    # sinh keeps its input's dtype and shape: if the kernel's result does
    # not, the kernel is wrong, whatever the fake says
    for t in samples:
        result = op(t.detach())
        if (result.dtype, result.shape) != (t.dtype, t.shape):
            got = f"{str(result.dtype)[6:]} {tuple(result.shape)}"
            return (f"the kernel returns {got} for a {str(t.dtype)[6:]} "
                    f"{tuple(t.shape)} x: fix the kernel, not the fake")
    return None


def _samples():
    f64 = torch.float64
    return (
        torch.rand(3, dtype=f64, requires_grad=True),
        torch.rand(3, dtype=torch.float32, requires_grad=True),
        torch.rand(2, 5, dtype=f64, requires_grad=True),
        torch.rand(5, 2, dtype=f64).T.requires_grad_(),  # other strides
    )


def check_operator(op):
    """Run the chapter's checks on ``op``, an operator meant to compute sinh(x).

    Prints each failing check with advice, or that every check passes. Afterwards
    ``check_operator.found`` maps each failing check to its advice ("values" when every
    check passes but the values are not sinh); it is empty for a correct operator.
    """
    if not isinstance(op, torch._library.custom_ops.CustomOpDef):
        raise TypeError(
            f"check_operator: expected an operator made with "
            f"torch.library.custom_op, got {type(op).__name__}. Decorate the "
            f"function with @torch.library.custom_op('book::sinh', "
            f"mutates_args=())."
        )
    x, x32, x2d, x_t = samples = _samples()
    checks = {  # opcheck on dtypes, shapes, layouts: a fake may ignore them
        "opcheck": lambda: [
            torch.library.opcheck(op, (t,)) for t in samples
        ],
        # two shapes: a backward written for one size may fail another
        "gradcheck": lambda: [gradcheck(op, (t,)) for t in (x, x2d)],
        "gradgradcheck": lambda: [gradgradcheck(op, (t,)) for t in (x, x2d)],
        "compile": lambda: torch.compile(
            op, backend="aot_eager", fullgraph=True
        )(x),
    }
    found = {}
    for name, check in checks.items():
        torch._dynamo.reset()
        try:
            with warnings.catch_warnings():
                # the anomaly-mode warning repeats the error
                warnings.simplefilter("ignore")
                check()
        except Exception as error:
            lines = [line for line in str(error).splitlines() if line.strip()]
            message = lines[0]
            if message.endswith("raised:") and len(lines) > 1:
                message += " " + lines[1].strip()  # compile's own error
            hint = advice(name, message)
            cause = None
            if hint == UNKNOWN:  # the real mistake may be wrapped
                hint, cause = _root_advice(name, _causes(error))
            if "tensor metadata" in message:  # the fake or the kernel?
                hint = _kernel_problem(op, samples) or hint
            found[name] = hint
            print(textwrap.fill(f"{name}: {message}", 79,
                                subsequent_indent="    "))
            if cause is not None and cause not in message:
                print(textwrap.fill(f"    caused by: {cause}", 79,
                                    subsequent_indent="       "))
            print(textwrap.fill(f"    -> {hint}", 79,
                                subsequent_indent="       "))
    if not found and not torch.allclose(op(x), torch.sinh(x)):
        found["values"] = "the forward computes another function"
        print("Every check passes, but the values are not sinh(x): the")
        print("forward computes another function (the backward matches it).")
    elif not found:
        print("Correct: every check passes, and the values are sinh(x).")
    check_operator.found = found


_KERNEL_LINE = r"^(\w+)(?:\[alias\])?: registered at .* :: "


def dispatch_facts(name):
    """What the chapter's dispatch drawing states about the operator ``name``, read off
    PyTorch: a dict with ``keys`` (sorted dispatch keys with a kernel, from the
    dispatcher's private listing), ``batched`` (whether FuncTorchBatched has one),
    ``order_holds`` (the dispatcher tries FuncTorchBatched, then autograd, then the
    device's kernel), ``fake_routes`` (how a meta tensor and a fake tensor reach a
    fake implementation: tensor type, device, whether the fake got a context) and
    ``excluded`` (whether autograd's keys are in the thread's exclude set inside a
    kernel reached through the Autograd kernel, and outside any call)."""
    if not isinstance(name, str) or "::" not in name:
        raise ValueError(
            f"dispatch_facts: expected an operator name such as 'book::cube', "
            f"got {name!r}."
        )
    listing = torch._C._dispatch_dump(name)
    if not listing:
        raise ValueError(
            f"dispatch_facts: no operator {name!r} is registered; define it "
            f"with torch.library.custom_op first."
        )
    keys = sorted(re.findall(_KERNEL_LINE, listing, re.MULTILINE))
    batched = torch._C._dispatch_has_kernel_for_dispatch_key(
        name, "FuncTorchBatched"
    )
    rank = [int(getattr(torch._C.DispatchKey, key)) for key in
            ("FuncTorchBatched", "AutogradFunctionality", "Dense")]
    return {"keys": keys, "batched": batched,
            "order_holds": rank == sorted(rank, reverse=True),
            "fake_routes": _fake_routes(),
            "excluded": _autograd_excluded()}


def _is_autograd_excluded():
    return torch._C._dispatch_tls_is_dispatch_key_excluded(
        torch._C.DispatchKey.AutogradOther
    )


def _autograd_excluded():
    # custom_op's Autograd kernel passes a call on to the kernels below it
    # under a guard (_AutoDispatchBelowAutograd) that puts autograd's keys in
    # the thread's exclude set: the kernel sees them there.
    seen = []

    def kernel(x: torch.Tensor) -> torch.Tensor:
        seen.append(_is_autograd_excluded())
        return x.clone()

    probe = torch.library.custom_op(
        "gradbook::exclude_probe", mutates_args=()
    )(kernel)
    probe.register_autograd(lambda ctx, grad: grad)
    with torch.enable_grad():
        probe(torch.ones(2, requires_grad=True))
    return {"inside the kernel": seen[0], "outside": _is_autograd_excluded()}


def _fake_routes():
    # A fake tensor does not reach the Meta kernel: FakeTensorMode, a
    # dispatch mode (Python key), calls the fake itself, with a context; a
    # meta tensor goes to the Meta kernel, which calls it without one.
    routes = []
    probe = torch.library.custom_op(
        "gradbook::route_probe", mutates_args=()
    )(_route_probe)

    @probe.register_fake
    def _(x):
        try:
            torch.library.get_ctx()
            has_context = True
        except Exception:  # no context outside FakeTensorMode
            has_context = False
        routes.append((type(x).__name__, x.device.type, has_context))
        return torch.empty_like(x)

    probe(torch.empty(2, device="meta"))
    with torch._subclasses.fake_tensor.FakeTensorMode():  # as compilers do
        probe(torch.empty(2))
    return routes


def _route_probe(x: torch.Tensor) -> torch.Tensor:
    return x.clone()
