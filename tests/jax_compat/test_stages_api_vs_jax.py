"""The parts of JAX's API its own documentation pages use (issue 41),
baton against JAX: ``jit(f).trace``, ``lower`` of ``ShapeDtypeStruct``s,
``Compiled`` of a function with static arguments, ``cost_analysis``,
``checkpoint_policies.save_any_names_but_these``,
``config.update("jax_num_cpu_devices", n)`` and
``ad_checkpoint.print_saved_residuals``'s format."""

import contextlib
import io
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import ad_checkpoint as jax_ckpt  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(41)
A = RNG.standard_normal((4, 3)).astype(F32)
B = RNG.standard_normal((3, 5)).astype(F32)


def _close(b, j):
    np.testing.assert_allclose(np.asarray(b), np.asarray(j), rtol=1e-5, atol=1e-6)


# ---- 1. jit(f).trace ----


def _mlp(L):
    np_ = L

    def f(x, w):
        return {"y": np_.tanh(x @ w), "s": (x * 2).sum()}

    return f


def test_trace_matches_jax():
    tb = bt.jit(_mlp(bnp)).trace(A, B)
    tj = jax.jit(_mlp(jnp)).trace(A, B)
    assert isinstance(tb, bt.stages.Traced)
    assert tb.fun_name == tj.fun_name == "f"
    ob, oj = tb.out_info, tj.out_info
    assert bt.tree.structure(ob) == bt.tree.structure({"y": 0, "s": 0})
    for k in ("y", "s"):
        assert ob[k].shape == oj[k].shape
        assert np.dtype(ob[k].dtype) == np.dtype(oj[k].dtype)
    # args_info: ((ArgInfo, ArgInfo), {}) with the arguments' shapes.
    (ab, kb), (aj, kj) = tb.args_info, tj.args_info
    assert kb == kj == {}
    assert [a.shape for a in ab] == [a.shape for a in aj] == [(4, 3), (3, 5)]
    assert [a.donated for a in ab] == [a.donated for a in aj]
    assert "dot_general" in str(tb.jaxpr)  # baton's program text
    # lower() is the Lowered of f.lower(*args): compiling it runs f.
    cb, cj = tb.lower().compile(), tj.lower().compile()
    rb, rj = cb(A, B), cj(A, B)
    _close(rb["y"], rj["y"])
    _close(rb["s"], rj["s"])
    assert tb.lower().as_text() == bt.jit(_mlp(bnp)).lower(A, B).as_text()


def test_trace_with_static_and_donated_arguments():
    def g(x, n, *, k):
        return x * n + k

    tb = bt.jit(g, static_argnums=1, static_argnames="k", donate_argnums=0).trace(
        A, 3, k=2.0
    )
    tj = jax.jit(g, static_argnums=1, static_argnames="k", donate_argnums=0).trace(
        A, 3, k=2.0
    )
    # Static arguments are left out of args_info, in both.
    assert len(tb.args_info[0]) == len(tj.args_info[0]) == 1
    assert tb.args_info[1] == {} and tj.args_info[1] == {}
    assert tb.args_info[0][0].donated is tj.args_info[0][0].donated is True
    assert tb.out_info.shape == tj.out_info.shape == (4, 3)
    _close(tb.lower().compile()(A.copy()), tj.lower().compile()(A.copy()))


# ---- 2. lower() of ShapeDtypeStructs ----


def test_lower_shape_dtype_structs():
    def f(p, y):
        return p["a"] @ y + p["b"]

    def run(api, np_arrays):
        sds = api.ShapeDtypeStruct
        # A pytree mixing structs and arrays, as JAX allows.
        lowered = api.jit(f).lower(
            {"a": sds((4, 3), F32), "b": np.zeros(5, F32)}, sds((3, 5), F32)
        )
        return lowered.compile()(
            {"a": np_arrays[0], "b": np.ones(5, F32)}, np_arrays[1]
        )

    _close(run(bt, (A, B)), run(jax, (A, B)))
    # Baton arrays of that signature run too.
    lowered = bt.jit(lambda x: x * 2).lower(bt.ShapeDtypeStruct((3,), F32))
    _close(lowered.compile()(bnp.ones(3)), np.full(3, 2, F32))
    # jax.ShapeDtypeStruct is accepted by baton's lower as well.
    lowered = bt.jit(lambda x: x + 1).lower(jax.ShapeDtypeStruct((2,), np.int32))
    _close(lowered.compile()(np.arange(2, dtype=np.int32)), np.arange(1, 3))


def test_lowered_struct_refuses_other_shapes_as_jax():
    cb = bt.jit(lambda x: x * 2).lower(bt.ShapeDtypeStruct((3,), F32)).compile()
    cj = jax.jit(lambda x: x * 2).lower(jax.ShapeDtypeStruct((3,), F32)).compile()
    with pytest.raises(TypeError):
        cj(np.ones(4, F32))
    with pytest.raises(TypeError):
        cb(np.ones(4, F32))


# ---- 3. Compiled of a function with static arguments ----


def test_compiled_takes_dynamic_arguments_only():
    x = np.arange(3, dtype=F32)

    def f(x, n):
        return x * n

    for kw in ({"static_argnums": 1}, {"static_argnames": "n"}):
        cb = bt.jit(f, **kw).lower(x, 3).compile()
        cj = jax.jit(f, **kw).lower(x, 3).compile()
        _close(cb(x), cj(x))
        _close(cb(x), x * 3)
        # Giving the static argument again: JAX raises TypeError, so does baton.
        with pytest.raises(TypeError):
            cj(x, 3)
        with pytest.raises(TypeError, match="dynamic arguments"):
            cb(x, 3)
    cb = bt.jit(f, static_argnames="n").lower(x, n=4).compile()
    cj = jax.jit(f, static_argnames="n").lower(x, n=4).compile()
    _close(cb(x), cj(x))
    with pytest.raises(TypeError):
        cj(x, n=4)
    with pytest.raises(TypeError, match="static keyword"):
        cb(x, n=4)


# ---- 4. cost_analysis ----

_KEYS = {"flops", "bytes accessed"}  # non-zero keys only: no transcendentals


def _costs(api, np_, f, *args):
    lowered = api.jit(f).lower(*args)
    return lowered.cost_analysis(), lowered.compile().cost_analysis()


def test_cost_analysis_matmul_flops_equal_jax():
    f_b, f_j = (lambda a, b: a @ b), (lambda a, b: a @ b)
    lb, cb = _costs(bt, bnp, f_b, A, B)
    lj, cj = _costs(jax, jnp, f_j, A, B)
    for d in (lb, cb, lj, cj):
        assert isinstance(d, dict)
    assert _KEYS <= set(cb) and _KEYS <= set(cj)
    assert "bytes accessedout{}" in cb and "bytes accessedout{}" in cj
    assert cb["flops"] == cj["flops"] == lb["flops"] == 2 * 4 * 5 * 3
    assert "transcendentals" not in cb and "transcendentals" not in cj
    assert cb["bytes accessed"] > 0
    # Batched matmul: 2*b*m*n*k.
    x3 = RNG.standard_normal((2, 4, 3)).astype(F32)
    y3 = RNG.standard_normal((2, 3, 6)).astype(F32)
    fb = _costs(bt, bnp, lambda a, b: bnp.einsum("bij,bjk->bik", a, b), x3, y3)[1]
    fj = _costs(jax, jnp, lambda a, b: jnp.einsum("bij,bjk->bik", a, b), x3, y3)[1]
    assert fb["flops"] == fj["flops"] == 2 * 2 * 4 * 6 * 3


def test_cost_analysis_elementwise_comparable():
    x = np.ones(10, F32)
    cb = _costs(bt, bnp, lambda v: v * 2 + 1, x)[1]
    cj = _costs(jax, jnp, lambda v: v * 2 + 1, x)[1]
    assert cb["flops"] == cj["flops"] == 20
    cb = _costs(bt, bnp, lambda v: bnp.sin(v) + bnp.exp(v), x)[1]
    cj = _costs(jax, jnp, lambda v: jnp.sin(v) + jnp.exp(v), x)[1]
    assert cb["transcendentals"] == cj["transcendentals"] == 20
    assert cb["flops"] == cj["flops"] == 10
    assert cb["bytes accessed"] > 0
    # Zero properties are left out, as XLA's: a reshape has no flops.
    cb = _costs(bt, bnp, lambda v: v.reshape(2, 5), x)[1]
    cj = _costs(jax, jnp, lambda v: v.reshape(2, 5), x)[1]
    assert "flops" not in cb and "flops" not in cj
    assert cb["bytes accessed"] > 0 and cj["bytes accessed"] > 0


# ---- 5. save_any_names_but_these ----


def _named(L, name):
    def f(x, w):
        a = name(L.sin(x @ w), "a")
        b = name(L.cos(a @ w), "b")
        c = name(L.tanh(b), "c")
        return (c * a).sum()

    return f


def _saved_names(print_fn, f, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_fn(f, *args)
    return set(re.findall(r"named '(\w+)'", out.getvalue())), out.getvalue()


W = RNG.standard_normal((4, 4)).astype(F32)
X = RNG.standard_normal((3, 4)).astype(F32)


@pytest.mark.parametrize("names", [("b",), ("a", "c"), ("a", "b", "c"), ()])
def test_save_any_names_but_these_gradients(names):
    fb = bt.checkpoint(
        _named(bnp, bt.ad_checkpoint.checkpoint_name),
        policy=bt.checkpoint_policies.save_any_names_but_these(*names),
    )
    fj = jax.checkpoint(
        _named(jnp, jax_ckpt.checkpoint_name),
        policy=jax.checkpoint_policies.save_any_names_but_these(*names),
    )
    gb = bt.grad(fb, argnums=(0, 1))(X, W)
    gj = jax.grad(fj, argnums=(0, 1))(X, W)
    for b, j in zip(gb, gj):
        np.testing.assert_allclose(np.asarray(b), np.asarray(j), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("names", [("b",), ("a", "c"), ("a", "b", "c")])
def test_save_any_names_but_these_saves_jax_names(names):
    fb = bt.checkpoint(
        _named(bnp, bt.ad_checkpoint.checkpoint_name),
        policy=bt.checkpoint_policies.save_any_names_but_these(*names),
    )
    fj = jax.checkpoint(
        _named(jnp, jax_ckpt.checkpoint_name),
        policy=jax.checkpoint_policies.save_any_names_but_these(*names),
    )
    sb, text_b = _saved_names(bt.ad_checkpoint.print_saved_residuals, fb, X, W)
    sj, text_j = _saved_names(jax_ckpt.print_saved_residuals, fj, X, W)
    assert sb == sj == {"a", "b", "c"} - set(names)
    # The same lines, word for word (arguments, names, file:line:col, function).
    assert text_b.splitlines() == text_j.splitlines()


def test_save_any_names_but_these_checks_names():
    with pytest.raises(TypeError):
        bt.checkpoint_policies.save_any_names_but_these(3)
    p = bt.checkpoint_policies.save_any_names_but_these("x", "y")
    assert "save_any_names_but_these" in repr(p)


# ---- 6. config.update("jax_num_cpu_devices", n) ----


def _run(code, env_extra):
    env = dict(os.environ, JAX_PLATFORMS="cpu", **env_extra)
    # The baton this process imported (the source tree's, or an installed one).
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(bt.__file__)), env.get("PYTHONPATH", "")]
    )
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_num_cpu_devices_in_a_subprocess():
    out_j = _run(
        """
        import jax, jax.numpy as jnp
        jax.config.update("jax_num_cpu_devices", 2)
        print(jax.device_count())
        jnp.ones(2).block_until_ready()
        try:
            jax.config.update("jax_num_cpu_devices", 3)
        except RuntimeError as e:
            print("RuntimeError", "before backends are initialized" in str(e))
        """,
        {},
    )
    out_b = _run(
        """
        import baton as bt
        bt.config.update("jax_num_cpu_devices", 2)  # what BATON_NUM_CPU_DEVICES made
        print(bt.device_count())
        try:
            bt.config.update("jax_num_cpu_devices", 3)
        except RuntimeError as e:
            print("RuntimeError", "before backends are initialized" in str(e))
            print("env" if "BATON_NUM_CPU_DEVICES=3" in str(e) else "no env")
        print(bt.config.jax_num_cpu_devices)
        """,
        # CPU devices are what the option counts: the CPU as the default
        # platform, whatever this run's BATON_PLATFORMS.
        {"BATON_NUM_CPU_DEVICES": "2", "BATON_PLATFORMS": "cpu"},
    )
    assert out_j.split() == ["2", "RuntimeError", "True"]
    assert out_b.split() == ["2", "RuntimeError", "True", "env", "2"]


def test_num_cpu_devices_type_error():
    with pytest.raises(ValueError):
        bt.config.update("jax_num_cpu_devices", "2")


# ---- 7. print_saved_residuals in JAX's format ----

_LINE = re.compile(
    r"^(f32|f64|f16|bf16|i32|i64|u8|bool|c64)\[[0-9,]*\] "
    r"(from the argument [\w\[\]'.]+|from a constant|"
    r"(output of [\w-]+|named '\w+') from .+:\d+:\d+ \(.+\))$"
)


def _lines(print_fn, f, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_fn(f, *args)
    return out.getvalue().splitlines()


def _sin_sin(L):
    return lambda x: L.sin(L.sin(x))


def _mlp_loss(L):
    def loss(params, x):
        (w1, b1), (w2, b2) = params
        h = L.tanh(x @ w1 + b1)
        return ((h @ w2 + b2) ** 2).sum()

    return loss


PARAMS = (
    (RNG.standard_normal((4, 5)).astype(F32), np.ones(5, F32)),
    (RNG.standard_normal((5, 2)).astype(F32), np.ones(2, F32)),
)


def test_print_saved_residuals_format_sin_sin():
    lb = _lines(bt.ad_checkpoint.print_saved_residuals, _sin_sin(bnp), F32(1.0))
    lj = _lines(jax_ckpt.print_saved_residuals, _sin_sin(jnp), F32(1.0))
    for line in lb + lj:
        assert _LINE.match(line), line
    # baton keeps x and the inner sin (JAX: the two cos values); the inner
    # sin's source is the inner call, as JAX's first cos.
    assert lb[0] == "f32[] from the argument x"
    assert lb[1].startswith("f32[] output of sin from ")
    where_b = lb[1].split(" from ", 1)[1]
    assert where_b in [line.split(" from ", 1)[1] for line in lj]
    assert where_b.endswith("(_sin_sin.<locals>.<lambda>)")


def test_print_saved_residuals_format_mlp():
    lb = _lines(bt.ad_checkpoint.print_saved_residuals, _mlp_loss(bnp), PARAMS, X)
    lj = _lines(jax_ckpt.print_saved_residuals, _mlp_loss(jnp), PARAMS, X)
    for line in lb + lj:
        assert _LINE.match(line), line
    args_b = [line for line in lb if "from the argument" in line]
    args_j = [line for line in lj if "from the argument" in line]
    assert args_b == args_j  # f32[4,5] from the argument params[0][0], ...
    # Every other line names a primitive at a line of the loss function.
    for line in lb:
        if "output of" in line:
            assert line.endswith("(_mlp_loss.<locals>.loss)"), line
    assert any("output of tanh" in line for line in lb)


def test_print_saved_residuals_closed_over_and_dtypes():
    w = bnp.ones((3, 3))
    wj = jnp.ones((3, 3))
    x = np.ones((2, 3), F32)
    lb = _lines(
        bt.ad_checkpoint.print_saved_residuals, lambda v: bnp.tanh(v @ w).sum(), x
    )
    lj = _lines(jax_ckpt.print_saved_residuals, lambda v: jnp.tanh(v @ wj).sum(), x)
    assert "f32[3,3] from a constant" in lb and "f32[3,3] from a constant" in lj
    lb = _lines(
        bt.ad_checkpoint.print_saved_residuals,
        lambda v: bnp.sin(v.astype(bnp.bfloat16)).astype(bnp.float32).sum(),
        x,
    )
    assert any(line.startswith("bf16[2,3] ") for line in lb), lb
    for line in lb:
        assert _LINE.match(line), line
