"""First-order optimizers, as ``jax.example_libraries.optimizers``.

An optimizer is a triple ``(init_fun, update_fun, get_params)``:

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)            # params: any pytree of arrays
    opt_state = opt_update(i, grads, opt_state)
    params = get_params(opt_state)

Step sizes are numbers or schedules (``i -> step size``; ``constant``,
``exponential_decay``, ``inverse_time_decay``, ``polynomial_decay``,
``piecewise_constant``). The state is an ``OptimizerState``, a pytree, so
``opt_update`` can be jitted with it as an argument;
``unpack_optimizer_state`` / ``pack_optimizer_state`` turn it into a plain
pytree and back (for saving it). ``@optimizer`` lifts an optimizer written
for one array to pytrees of them.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable

from baton import numpy as jnp
from baton import tree_util

__all__ = [
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]

Schedule = Callable[[int], float]

# The state of an optimizer over a pytree of parameters: the flat list of
# per-leaf states (each flattened), the parameters' tree structure and each
# per-leaf state's structure. A pytree whose children are the packed states.
OptimizerState = namedtuple(
    "OptimizerState", ["packed_state", "tree_def", "subtree_defs"]
)
tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]),
)

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def _unzip2(pairs: Any) -> tuple[list, list]:
    xs, ys = [], []
    for x, y in pairs:
        xs.append(x)
        ys.append(y)
    return xs, ys


def optimizer(opt_maker: Callable[..., tuple]) -> Callable[..., Optimizer]:
    """Decorator: ``opt_maker(*args) -> (init, update, get_params)`` written
    for a single array becomes an optimizer over pytrees of arrays."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Any) -> OptimizerState:
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = _unzip2(map(tree_util.tree_flatten, initial_states))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(
            i: Any, grad_tree: Any, opt_state: OptimizerState
        ) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did "
                    "not match the parameter tree structure with which it was "
                    f"initialized: parameter tree {tree} and grad tree {tree2}."
                )
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            new_states = map(functools.partial(update, i), grad_flat, states)
            new_states_flat, subtrees2 = _unzip2(
                map(tree_util.tree_flatten, new_states)
            )
            for subtree, subtree2 in zip(subtrees, subtrees2):
                if subtree2 != subtree:
                    raise TypeError(
                        "optimizer update function produced an output structure "
                        "that did not match its input structure: input "
                        f"{subtree} and output {subtree2}."
                    )
            return OptimizerState(new_states_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Any:
            states_flat, tree, subtrees = opt_state
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            params = map(get_params, states)
            return tree_util.tree_unflatten(tree, list(params))

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ---- optimizers ----



def _params_of(state: tuple) -> Any:
    """The parameters of an optimizer state whose first entry they are (the
    ``get_params`` of every optimizer here)."""
    return state[0]

@optimizer
def sgd(step_size: Any) -> tuple:
    """Stochastic gradient descent: ``x - step_size(i) * g``."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0

    def update(i: Any, g: Any, x: Any) -> Any:
        return x - step_size(i) * g

    def get_params(x: Any) -> Any:
        return x

    return init, update, get_params


@optimizer
def momentum(step_size: Any, mass: float) -> tuple:
    """SGD with momentum: ``v = mass * v + g; x - step_size(i) * v``."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, _params_of


@optimizer
def nesterov(step_size: Any, mass: float) -> tuple:
    """SGD with Nesterov momentum."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, _params_of


@optimizer
def adagrad(step_size: Any, momentum: float = 0.9) -> tuple:
    """Adagrad (with momentum on the scaled gradient)."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _params_of


@optimizer
def rmsprop(step_size: Any, gamma: float = 0.9, eps: float = 1e-8) -> tuple:
    """RMSProp: steps scaled by a running average of squared gradients."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _params_of


@optimizer
def rmsprop_momentum(
    step_size: Any, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> tuple:
    """RMSProp with momentum."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _params_of


@optimizer
def adam(
    step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple:
    """Adam (Kingma and Ba), with bias-corrected moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, v = state
        m = (1 - b1) * g + b1 * m  # first moment
        v = (1 - b2) * jnp.square(g) + b2 * v  # second moment
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return init, update, _params_of


@optimizer
def adamax(
    step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple:
    """AdaMax, Adam's infinity-norm variant."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))  # exponentially weighted infinity norm
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (
            u + eps
        )
        return x, m, u

    return init, update, _params_of


def _splice(seq: Any, i: int, x: list) -> list:
    lst = list(seq)
    lst[i : i + 1] = x
    return lst


def _broadcast_into(ndim: int, x: Any, axis: int) -> Any:
    idx = _splice([None] * ndim, axis, [slice(None)])
    return x[tuple(idx)]


@optimizer
def sm3(step_size: Any, momentum: float = 0.9) -> tuple:
    """SM3 (memory-efficient adaptive optimization): one accumulator
    vector per axis of each parameter instead of a full-size one."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> tuple:
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(sz, dtype=x0.dtype) for sz in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, vs, x_shape = state
        vs = [_broadcast_into(g.ndim, v, k) for k, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(_splice(range(x.ndim), j, []))) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state: tuple) -> Any:
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


# ---- schedules ----


def constant(step_size: float) -> Schedule:
    """The same step size at every step."""

    def schedule(i: Any) -> Any:
        return step_size

    return schedule


def exponential_decay(
    step_size: float, decay_steps: float, decay_rate: float
) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i: Any) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(
    step_size: float, decay_steps: float, decay_rate: float, staircase: bool = False
) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)`` (``staircase``:
    with ``floor(i / decay_steps)``)."""
    if staircase:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))

    else:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(
    step_size: float, decay_steps: int, final_step_size: float, power: float = 1.0
) -> Schedule:
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` steps
    along ``(1 - i / decay_steps) ** power``; constant after."""

    def schedule(step_num: Any) -> Any:
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps past ``k`` of the ``boundaries`` (one fewer
    boundary than values)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i: Any) -> Any:
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    """A schedule as it is; a number as ``constant(number)``."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---- utilities ----


def l2_norm(tree: Any) -> Any:
    """The l2 norm of all the leaves of a pytree, together."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """``grad_tree`` scaled down so that its ``l2_norm`` is at most
    ``max_norm``."""
    norm = l2_norm(grad_tree)

    def normalize(g: Any) -> Any:
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))

    return tree_util.tree_map(normalize, grad_tree)


class JoinPoint:
    """Marks where a per-parameter state sits in an unpacked optimizer
    state (a leaf of the parameters' tree structure)."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as a pytree of ``JoinPoint``s in the parameters' structure
    (each holding that parameter's state), e.g. to save it."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(tree_util.tree_unflatten, subtree_defs, states_flat)
    sentinels = [JoinPoint(subtree) for subtree in subtrees]
    return tree_util.tree_unflatten(tree_def, sentinels)


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of ``unpack_optimizer_state``."""
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: expected a pytree of JoinPoints")
    subtrees = [s.subtree for s in sentinels]
    states_flat, subtree_defs = _unzip2(map(tree_util.tree_flatten, subtrees))
    return OptimizerState(states_flat, tree_def, subtree_defs)
