"""``stax``: a neural network library of (init_fun, apply_fun) pairs, as
``jax.example_libraries.stax``.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)
-> (output_shape, params)`` and ``apply_fun(params, inputs, **kwargs) ->
outputs`` (``rng=`` for layers that need randomness). Combinators
(``serial``, ``parallel``, ``shape_dependent``) build layers out of layers.

The convolutions (``GeneralConv``, ``Conv``, ``GeneralConvTranspose``,
``ConvTranspose``, ``Conv1DTranspose``) are ``bt.lax.conv_general_dilated``
and ``conv_transpose``; the pooling layers (``MaxPool``, ``SumPool``,
``AvgPool``) ``bt.lax.reduce_window``, as in JAX.
"""

from __future__ import annotations

import functools
import operator as op
from typing import Any, Callable

from baton import lax, random
from baton import numpy as jnp
from baton.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from baton.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "elu",
    "gelu",
    "glorot",
    "leaky_relu",
    "log_softmax",
    "logsoftmax",
    "normal",
    "ones",
    "parallel",
    "randn",
    "relu",
    "selu",
    "serial",
    "shape_dependent",
    "sigmoid",
    "softmax",
    "softplus",
    "standardize",
    "zeros",
]

Layer = tuple[Callable[..., Any], Callable[..., Any]]

# JAX's older names of the initializers and of log_softmax.
logsoftmax = log_softmax
glorot = glorot_normal
randn = normal


# ---- layers with parameters ----


def Dense(
    out_dim: int,
    W_init: Any = glorot_normal(),  # noqa: B008 -- JAX's signature
    b_init: Any = normal(),  # noqa: B008
) -> Layer:
    """A fully connected layer: ``inputs @ W + b``, W of shape
    ``(input_shape[-1], out_dim)``."""

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        output_shape = (*input_shape[:-1], out_dim)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple,
    input_shape: tuple,
) -> list:
    lhs_spec, rhs_spec, _ = dimension_numbers
    it = iter(filter_shape)
    return [
        out_chan
        if c == "O"
        else input_shape[lhs_spec.index("C")]
        if c == "I"
        else next(it)
        for c in rhs_spec
    ]


def GeneralConv(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple,
    strides: tuple | None = None,
    padding: Any = "VALID",
    W_init: Any = None,
    b_init: Any = normal(1e-6),  # noqa: B008 -- JAX's signature
) -> Layer:
    """A convolution layer with the given dimension numbers (strings such
    as ``('NHWC', 'HWIO', 'NHWC')``): ``conv_general_dilated(inputs, W) +
    b``, W glorot-normal over its I and O dimensions by default."""
    _, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        kernel_shape = _kernel_shape(
            dimension_numbers, out_chan, filter_shape, input_shape
        )
        output_shape = lax.conv_general_shape_tuple(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        out = lax.conv_general_dilated(
            inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple,
    strides: tuple | None = None,
    padding: Any = "VALID",
    W_init: Any = None,
    b_init: Any = normal(1e-6),  # noqa: B008 -- JAX's signature
) -> Layer:
    """A transposed-convolution layer: ``conv_transpose(inputs, W) + b``."""
    _, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        kernel_shape = _kernel_shape(
            dimension_numbers, out_chan, filter_shape, input_shape
        )
        output_shape = lax.conv_transpose_shape_tuple(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        out = lax.conv_transpose(
            inputs, W, strides, padding, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Any = zeros,
    gamma_init: Any = ones,
) -> Layer:
    """Normalizes over ``axis`` (batch statistics), then scales by gamma and
    shifts by beta (each optional), parameters of the other axes' shape."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    _beta_init = lambda rng, shape: beta_init(rng, shape) if center else ()  # noqa: E731
    _gamma_init = lambda rng, shape: gamma_init(rng, shape) if scale else ()  # noqa: E731

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta, gamma = _beta_init(k1, shape), _gamma_init(k2, shape)
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        # Parameters broadcast along the normalized axes.
        ed = tuple(None if i in axes else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


# ---- elementwise layers ----


# ---- pooling ----


def _pooling_layer(reducer: Any, init_val: float, rescaler: Any = None) -> Any:
    def PoolingLayer(
        window_shape: tuple,
        strides: tuple | None = None,
        padding: str = "VALID",
        spec: str | None = None,
    ) -> Layer:
        """A pooling layer over the spatial dimensions (all but N and C:
        the first and last unless ``spec`` names them)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial = (0, len(window_shape) + 1)
        else:
            non_spatial = (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = (*window_shape[:i], 1, *window_shape[i:])
            strides = (*strides[:i], 1, *strides[i:])

        def init_fun(rng: Any, input_shape: tuple) -> tuple:
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones = (1,) * len(window_shape)
            out_shape = lax.reduce_window_shape_tuple(
                input_shape, window_shape, strides, pads, ones, ones
            )
            return out_shape, ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(
                inputs, init_val, reducer, window_shape, strides, padding
            )
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


def _normalize_by_window_size(dims: tuple, strides: tuple, padding: str) -> Any:
    def rescale(outputs: Any, inputs: Any, spec: str | None) -> Any:
        if spec is None:
            non_spatial = (0, inputs.ndim - 1)
        else:
            non_spatial = (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(
            inputs.shape[i] for i in range(inputs.ndim) if i not in non_spatial
        )
        one = jnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = lax.reduce_window(one, 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes

    return rescale


MaxPool = _pooling_layer(lax.max, -float("inf"))
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``."""

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---- shape and routing layers ----


def _flatten() -> Layer:
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        rest = functools.reduce(op.mul, input_shape[1:], 1)
        return (input_shape[0], rest), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()  # keeps the leading (batch) axis, flattens the rest


def _identity() -> Layer:
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


Identity = _identity()


def FanOut(num: int) -> Layer:
    """``num`` copies of the input (a list), for ``parallel``."""

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()  # the sum of a list of inputs


def FanInConcat(axis: int = -1) -> Layer:
    """The inputs (a list) concatenated along ``axis``."""

    def init_fun(rng: Any, input_shape: Any) -> tuple:
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return (*first[:ax], concat_size, *first[ax + 1 :]), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """In ``mode="train"``, keeps each input with probability ``rate`` (as
    JAX's stax: ``rate`` is the keep rate), scaled by ``1 / rate``; needs
    ``rng=`` at apply time. Any other mode: the identity."""

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key "
                "argument. That is, instead of `apply_fun(params, inputs)`, call "
                "it like `apply_fun(params, inputs, rng)` where `rng` is a PRNG "
                "key (e.g. from `baton.random.key`)."
            )
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


# ---- combinators ----


def serial(*layers: Layer) -> Layer:
    """The layers one after the other; params is a list, one per layer.
    ``rng=`` at apply time is split among them."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side on a list of inputs (one each), giving a list
    of outputs; use with ``FanOut`` and ``FanInSum`` / ``FanInConcat``."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple:
        rngs = random.split(rng, nlayers)
        shapes, params = [], []
        for init, r, shape in zip(init_funs, rngs, input_shape):
            s, p = init(r, shape)
            shapes.append(s)
            params.append(p)
        return tuple(shapes), tuple(params)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [
            f(p, x, rng=r, **kwargs)
            for f, p, x, r in zip(apply_funs, params, inputs, rngs)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[tuple], Layer]) -> Layer:
    """A layer chosen by the input's shape: ``make_layer(input_shape)``."""

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
