"""The Hessian-vector product routes of "Double backward at work", for the
page that measures them in depth: the chapter's function f, its three
product routes, and sized problems to run them on."""

import torch


def f(x, w):
    """sum_i w_i x_i^3 + (sum_i x_i)^2: only *, + and sum."""
    total = x.sum()
    return (w * x * x * x).sum() + total * total


def autograd_hvp(function, x, w, v):
    """H v by torch.autograd.grad twice (create_graph=True, then v)."""
    x = x.detach().requires_grad_()
    (gradient,) = torch.autograd.grad(function(x, w), x, create_graph=True)
    (hvp,) = torch.autograd.grad(gradient, x, grad_outputs=v)
    return hvp


def func_hvp(function, x, w, v):
    """H v as the jvp of torch.func.grad (forward over reverse)."""

    def gradient_at(point):
        return torch.func.grad(function)(point, w)

    _, hvp = torch.func.jvp(gradient_at, (x,), (v,))
    return hvp


def func_grad_of_grad_hvp(function, x, w, v):
    """H v as the grad of (grad f) . v (reverse over reverse)."""

    def gradient_along_v(point):
        return torch.func.grad(function)(point, w).dot(v)

    return torch.func.grad(gradient_along_v)(x)


def problem_of_size(size, seed):
    """A point, weights and a direction: three float64 vectors of length size,
    the same for the same seed."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(
            f"problem_of_size: size must be a positive int, got {size!r}"
        )
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.randn(size, generator=generator, dtype=torch.float64)
        for _ in range(3)
    ]


def hvp_routes(function, point, weights, direction):
    """The four routes to H v of function(point, weights), by name, each a
    call with no arguments (the last forms the full Hessian)."""
    if not callable(function):
        raise TypeError(
            f"hvp_routes: function must be callable, got {type(function)}"
        )
    if point.dim() != 1 or direction.shape != point.shape:
        raise ValueError(
            "hvp_routes: point and direction must be vectors of one length, "
            f"got shapes {tuple(point.shape)} and {tuple(direction.shape)}; "
            "problem_of_size(n, seed) makes a matching set"
        )
    return {
        "autograd.grad": lambda: autograd_hvp(
            function, point, weights, direction
        ),
        "jvp of grad": lambda: func_hvp(function, point, weights, direction),
        "func.grad twice": lambda: func_grad_of_grad_hvp(
            function, point, weights, direction
        ),
        "hessian, then H @ v": lambda: (
            torch.func.hessian(function)(point, weights) @ direction
        ),
    }


def kept_graph_product(function, x, w):
    """v -> H v on one recorded first backward, kept for every product (the
    first backward is paid once, at this call)."""
    point = x.detach().requires_grad_()
    (gradient,) = torch.autograd.grad(
        function(point, w), point, create_graph=True
    )
    return lambda v: torch.autograd.grad(
        gradient, point, grad_outputs=v, retain_graph=True
    )[0]
