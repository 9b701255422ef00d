"""JAX's top-level configuration states, jax.ops, jax.image, jax.monitoring,
jax.stages / dlpack / custom_derivatives / version, fwd_and_bwd, pmap and
the sharded-array constructors, jax.nn.dot_product_attention and the added
jax.numpy functions against JAX: values, shapes, dtypes, errors, and the
effects of the context managers."""

import io
import logging
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(0)


def _close(b, j, **tol):
    tol = tol or dict(rtol=1e-5, atol=1e-6)
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, equal_nan=True, **tol)


def _same(b, j, **tol):
    bl, jl = bt.tree.leaves(b), jax.tree_util.tree_leaves(j)
    assert len(bl) == len(jl)
    for u, v in zip(bl, jl):
        _close(u, v, **tol)


# ---- configuration states ----


def _log(x):
    return bnp.log(x) * 2


def _jlog(x):
    return jnp.log(x) * 2


@pytest.mark.parametrize(
    "state,value,kind", [("debug_nans", -1.0, "nan"), ("debug_infs", 0.0, "inf")]
)
def test_debug_nans_infs_name_the_operation(state, value, kind):
    f = bt.jit(_log)
    with getattr(bt, state)(True):
        with pytest.raises(FloatingPointError, match=rf"invalid value \({kind}\) encountered in log"):
            f(bnp.float32(value))
        with pytest.raises(FloatingPointError, match=rf"invalid value \({kind}\) encountered in log"):
            bnp.log(bnp.float32(value))
        np.testing.assert_allclose(f(bnp.float32(2.0)), np.log(2.0) * 2, rtol=1e-6)
    with getattr(jax, state)(True), pytest.raises(FloatingPointError, match=kind):
        jax.jit(_jlog)(jnp.float32(value))
    # Off again: the value comes back.
    assert np.isnan(f(bnp.float32(-1.0))) or np.isinf(f(bnp.float32(0.0)))


def test_debug_nans_through_config_update():
    bt.config.update("jax_debug_nans", True)
    assert bt.debug_nans.value is True and bt.config.jax_debug_nans is True
    with pytest.raises(FloatingPointError):
        bnp.sqrt(bnp.float32(-1.0))
    bt.config.update("jax_debug_nans", False)
    assert np.isnan(bnp.sqrt(bnp.float32(-1.0)))


def test_debug_nans_leaves_integer_outputs_alone():
    with bt.debug_nans(True):
        assert int(bnp.int32(3) + 1) == 4


def test_rank_promotion():
    a, b = np.ones((2, 3), F32), np.ones(3, F32)
    with jax.numpy_rank_promotion("raise"), pytest.raises(ValueError) as ej:
        jnp.ones((2, 3)) + jnp.ones(3)
    with bt.numpy_rank_promotion("raise"), pytest.raises(ValueError) as eb:
        bnp.add(a, b)
    assert str(eb.value) == str(ej.value)
    with bt.numpy_rank_promotion("raise"):
        _close(bnp.asarray(a) * 2.0, a * 2)  # scalars are not rank promotion
        with pytest.raises(ValueError):
            bnp.asarray(a) - bnp.asarray(b)  # the operators too
    with bt.numpy_rank_promotion("warn"), pytest.warns(UserWarning, match="rank promotion"):
        bnp.multiply(a, b)
    _close(bnp.add(a, b), a + b)  # allow (the default)


def test_dtype_promotion_strict():
    f, i = np.ones(3, F32), np.ones(3, np.int32)
    with jax.numpy_dtype_promotion("strict"), pytest.raises(ValueError) as ej:
        jnp.asarray(f) + jnp.asarray(i)
    with bt.numpy_dtype_promotion("strict"):
        with pytest.raises(bt.dtypes.TypePromotionError) as eb:
            bnp.asarray(f) + bnp.asarray(i)
        for e in (eb.value, ej.value):  # the same message (dtypes in either order)
            assert "no available implicit dtype promotion path" in str(e)
            assert "'float32'" in str(e) and "'int32'" in str(e)
        with pytest.raises(ValueError):
            bnp.multiply(f, f.astype(np.float16))
        _close(bnp.asarray(f) + 1, np.asarray(jnp.asarray(f) + 1))  # weak scalars
    _close(bnp.asarray(f) + bnp.asarray(i), jnp.asarray(f) + jnp.asarray(i))


def _transfer_outcomes(mod, np_mod, guard):
    x = mod.ones(3)
    f = (bt.jit if mod is bnp else jax.jit)(lambda a: a + 1)
    put = bt.device_put if mod is bnp else jax.device_put
    cases = {
        "jit numpy argument": lambda: f(np.ones(3, F32)),
        "eager numpy operand": lambda: x + np.ones(3, F32),
        "array(numpy)": lambda: mod.array(np.ones(3, F32)),
        "python scalar": lambda: x + 1,
        "device_put": lambda: put(np.ones(3, F32)),
        "np.asarray (cpu)": lambda: np.asarray(x),
    }
    out = {}
    with guard:
        for name, fn in cases.items():
            try:
                fn()
                out[name] = "ok"
            except Exception as e:  # noqa: BLE001
                assert "isallowed host-to-device" in str(e), e
                assert isinstance(e, RuntimeError), type(e)
                out[name] = "disallowed"
    return out


@pytest.mark.cpu_default_device  # np.asarray of a CPU array is no transfer
@pytest.mark.parametrize("mode", ["disallow", "disallow_explicit"])
def test_transfer_guard_matches_jax(mode):
    b = _transfer_outcomes(bnp, np, bt.transfer_guard(mode))
    j = _transfer_outcomes(jnp, np, jax.transfer_guard(mode))
    assert b == j
    assert b["jit numpy argument"] == "disallowed"


@pytest.mark.cpu_default_device
def test_transfer_guard_log_and_per_direction(caplog):
    with caplog.at_level(logging.WARNING, logger="baton.transfer_guard"):
        with bt.transfer_guard_host_to_device("log"):
            bnp.ones(3) + np.ones(3, F32)
    assert any("host-to-device" in r.getMessage().lower() for r in caplog.records)
    with bt.transfer_guard_device_to_host("disallow"):
        np.asarray(bnp.ones(3))  # a zero-copy view on the CPU, as in JAX
    assert bt.transfer_guard_host_to_device.value == "allow"
    with pytest.raises(ValueError):
        with bt.transfer_guard("sometimes"):
            pass


def test_no_tracing_and_no_execution():
    g = bt.jit(lambda x: x * 3)
    g(bnp.ones(2))
    with bt.no_tracing(True):
        _close(g(bnp.ones(2)), np.full(2, 3, F32))  # cached: runs
        with pytest.raises(RuntimeError, match="no_tracing"):
            g(bnp.ones(5))
    with bt.no_execution(True), pytest.raises(RuntimeError, match="no_execution"):
        g(bnp.ones(2))
    with jax.no_execution(True), pytest.raises(RuntimeError, match="no_execution"):
        jnp.ones(3) + 1


def test_explain_cache_misses(caplog):
    f = bt.jit(lambda x, n: x * n, static_argnums=1)
    with caplog.at_level(logging.WARNING, logger="baton.jit"), bt.explain_cache_misses(True):
        f(bnp.ones(3), 2)
        f(bnp.ones(3), 2)
        f(bnp.ones(4), 2)
        f(bnp.ones(4), 3)
    msgs = [r.getMessage() for r in caplog.records if "CACHE MISS" in r.getMessage()]
    assert len(msgs) == 3
    assert "never seen function" in msgs[0]
    assert "float32[3] before, now float32[4]" in msgs[1]
    assert "2 before, now 3" in msgs[2]


def test_recorded_and_fixed_states():
    for name, jax_state in [
        ("default_matmul_precision", jax.default_matmul_precision),
        ("check_tracer_leaks", jax.check_tracer_leaks),
        ("enable_checks", jax.enable_checks),
        ("default_prng_impl", jax.default_prng_impl),
        ("threefry_partitionable", jax.threefry_partitionable),
        ("enable_custom_prng", jax.enable_custom_prng),
        ("debug_key_reuse", jax.debug_key_reuse),
        ("softmax_custom_jvp", jax.softmax_custom_jvp),
    ]:
        assert getattr(bt, name).value == jax_state.value, name
    with bt.default_matmul_precision("highest"):
        a = RNG.normal(size=(4, 4)).astype(F32)
        _close(bnp.asarray(a) @ a, np.asarray(jnp.asarray(a) @ a), rtol=1e-5, atol=1e-5)
    with bt.checking_leaks():
        assert bt.check_tracer_leaks.value is True
    with pytest.raises(ValueError, match="threefry_partitionable"):
        bt.config.update("jax_threefry_partitionable", False)
    # The generator is JAX's default one (partitionable threefry).
    _close(bt.random.uniform(bt.random.key(1), (5,)), jax.random.uniform(jax.random.key(1), (5,)))
    with bt.softmax_custom_jvp(True):
        x = RNG.normal(size=(3, 4)).astype(F32)
        gb = bt.grad(lambda v: (bt.nn.softmax(v) ** 2).sum())(x)
    with jax.softmax_custom_jvp(True):
        gj = jax.grad(lambda v: (jax.nn.softmax(v) ** 2).sum())(x)
    _close(gb, gj, rtol=1e-5, atol=1e-6)


def test_make_user_context_retraces():
    traces = []

    @bt.jit
    def f(x):
        traces.append(1)
        return x + 1

    ctx = bt.make_user_context(0)
    f(bnp.ones(2))
    f(bnp.ones(2))
    assert len(traces) == 1
    with ctx(1):
        f(bnp.ones(2))
    assert len(traces) == 2 and ctx.value == 0


# ---- jax.ops ----

SEG_DATA = RNG.normal(size=(10, 3)).astype(F32)
SEG_IDS = np.array([0, 0, 1, 3, 3, 3, -1, 5, 2, 1], np.int32)


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize(
    "kw",
    [dict(num_segments=4), dict(num_segments=4, bucket_size=3), dict(num_segments=4, mode="clip"),
     {}, dict(num_segments=6, indices_are_sorted=False, unique_indices=False)],
)
def test_segment_ops(kind, kw):
    b = getattr(bt.ops, "segment_" + kind)(SEG_DATA, SEG_IDS, **kw)
    j = getattr(jax.ops, "segment_" + kind)(SEG_DATA, SEG_IDS, **kw)
    _close(b, j)


def test_segment_ops_jit_grad_ints():
    f = bt.jit(lambda d, i: bt.ops.segment_max(d, i, 4))
    _close(f(SEG_DATA, SEG_IDS), jax.ops.segment_max(SEG_DATA, SEG_IDS, 4))
    for kind in ("sum", "max"):
        gb = bt.grad(lambda d: getattr(bt.ops, "segment_" + kind)(d, SEG_IDS, 4).sum())(SEG_DATA)
        gj = jax.grad(lambda d: getattr(jax.ops, "segment_" + kind)(d, SEG_IDS, 4).sum())(SEG_DATA)
        _close(gb, gj)
    ints = np.arange(5, dtype=np.int32)
    ids = np.array([0, 1, 1, 2, 2], np.int32)
    _close(bt.ops.segment_sum(ints, ids, 4), jax.ops.segment_sum(ints, ids, 4))
    _close(bt.ops.segment_min(ints, ids, 4), jax.ops.segment_min(ints, ids, 4))
    with pytest.raises(TypeError, match="segment_ids"):
        bt.ops.segment_sum(SEG_DATA, SEG_IDS.astype(F32), 4)


# ---- jax.image ----

IMG = RNG.normal(size=(2, 7, 9, 3)).astype(F32)
METHODS = ["nearest", "linear", "bilinear", "trilinear", "cubic", "bicubic", "cubic-pytorch",
           "lanczos3", "lanczos5", "area"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [(2, 14, 5, 3), (2, 3, 20, 3)])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize(method, shape, antialias):
    _close(
        bt.image.resize(IMG, shape, method, antialias=antialias),
        jax.image.resize(IMG, shape, method, antialias=antialias),
        rtol=1e-5, atol=1e-5,
    )


def test_resize_dtypes_jit_grad_errors():
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    for m in ("nearest", "linear"):
        _close(bt.image.resize(ints, (6, 8), m), jax.image.resize(ints, (6, 8), m))
    _close(bt.image.resize(IMG, (2, 7, 5, 3), bt.image.ResizeMethod.LANCZOS3),
           jax.image.resize(IMG, (2, 7, 5, 3), jax.image.ResizeMethod.LANCZOS3), atol=1e-5)
    f = bt.jit(lambda x: bt.image.resize(x, (2, 14, 5, 3), "cubic"))
    _close(f(IMG), jax.image.resize(IMG, (2, 14, 5, 3), "cubic"), atol=1e-5)
    gb = bt.grad(lambda x: (bt.image.resize(x, (2, 14, 5, 3), "lanczos3") ** 2).sum())(IMG)
    gj = jax.grad(lambda x: (jax.image.resize(x, (2, 14, 5, 3), "lanczos3") ** 2).sum())(IMG)
    _close(gb, gj, atol=1e-4)
    with pytest.raises(ValueError, match="Unknown resize method"):
        bt.image.resize(IMG, (2, 3, 3, 3), "sinc")
    with pytest.raises(ValueError, match="shape must have length"):
        bt.image.resize(IMG, (3, 3), "linear")


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5", "area", "cubic-pytorch"])
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate(method, antialias):
    s, t = np.array([1.7, 0.6], F32), np.array([0.3, -1.2], F32)
    _close(
        bt.image.scale_and_translate(IMG, (2, 10, 6, 3), (1, 2), s, t, method, antialias=antialias),
        jax.image.scale_and_translate(IMG, (2, 10, 6, 3), (1, 2), s, t, method, antialias=antialias),
        rtol=1e-5, atol=1e-5,
    )


def test_scale_and_translate_grad():
    s, t = np.array([1.7, 0.6], F32), np.array([0.3, -1.2], F32)

    def loss(mod, img):
        return lambda s: (mod.scale_and_translate(img, (2, 10, 6, 3), (1, 2), s, t, "linear") ** 2).sum()

    _close(bt.grad(loss(bt.image, IMG))(s), jax.grad(loss(jax.image, IMG))(s), rtol=1e-4)
    with pytest.raises(ValueError, match="Nearest"):
        bt.image.scale_and_translate(IMG, IMG.shape, (1,), s[:1], t[:1], "nearest")


# ---- small modules ----


def test_monitoring_records_traces():
    events = []

    def listener(event, duration, **kw):
        events.append((event, duration, kw))

    bt.monitoring.register_event_duration_secs_listener(listener)
    try:
        bt.jit(lambda x: x - 1)(bnp.ones(7))
    finally:
        bt.monitoring.unregister_event_duration_listener(listener)
    assert any(e == "/jax/core/compile/jaxpr_trace_duration" and d >= 0 for e, d, _ in events)
    got = []
    bt.monitoring.register_event_listener(lambda e, **kw: got.append((e, kw)))
    bt.monitoring.record_event("/my/event", a=1)
    bt.monitoring.clear_event_listeners()
    bt.monitoring.record_event("/my/event")
    assert got == [("/my/event", {"a": 1})]
    assert sorted(n for n in dir(bt.monitoring) if not n.startswith("_")) == sorted(
        n for n in dir(jax.monitoring) if not n.startswith("_")
    )


def test_small_modules():
    assert bt.custom_derivatives.custom_jvp is bt.custom_jvp
    assert bt.custom_derivatives.custom_vjp is bt.custom_vjp
    f = bt.jit(lambda x: x + 1)
    lowered = f.lower(bnp.ones(2))
    assert isinstance(f, bt.stages.Wrapped)
    assert isinstance(lowered, bt.stages.Lowered)
    assert isinstance(lowered.compile(), bt.stages.Compiled)
    for d in ["bool", "int8", "uint32", "float16", "float32", "complex64", bt.dtypes.bfloat16]:
        assert bt.dlpack.is_supported_dtype(d) == jax.dlpack.is_supported_dtype(jnp.dtype(d))
    _close(bt.dlpack.from_dlpack(np.arange(3, dtype=F32)), np.arange(3, dtype=F32))
    assert bt.version.__version__ == bt.__version__
    assert bt.version.__version_info__ == tuple(int(p) for p in bt.__version__.split(".")[:3])
    assert bt.Shard.__name__ == "Shard"


def test_fwd_and_bwd():
    x = RNG.normal(size=(4, 3)).astype(F32)
    w = RNG.normal(size=(3, 3)).astype(F32)
    for argnums in [(0, 1), 1]:
        fb, bb = bt.fwd_and_bwd(lambda a, b: bnp.tanh(a @ b), argnums)
        fj, bj = jax.fwd_and_bwd(lambda a, b: jnp.tanh(a @ b), argnums)
        yb, rb = fb(x, w)
        yj, rj = fj(x, w)
        _close(yb, yj, atol=1e-6)
        _same(bb(rb, np.ones_like(x)), bj(rj, np.ones_like(x)), rtol=1e-5, atol=1e-5)
    fb, bb = bt.fwd_and_bwd(lambda a: (bnp.sin(a).sum(), a * 2), 0, has_aux=True, jitted=False)
    y, r, aux = fb(x)
    _close(aux, x * 2)
    _close(bb(r, F32(1.0)), np.cos(x), atol=1e-6)


_PMAP_SCRIPT = textwrap.dedent(
    """
    import numpy as np, jax, baton as bt, baton.numpy as bnp
    x = np.arange(12., dtype=np.float32).reshape(4, 3)
    def same(name, a, b):
        a, b = np.asarray(a), np.asarray(b)
        print(name, "OK" if a.shape == b.shape and np.allclose(a, b) else f"BAD {a} {b}")
    same("psum", bt.pmap(lambda v: v * 2 + bt.lax.psum(v, "i"), "i")(x),
         jax.pmap(lambda v: v * 2 + jax.lax.psum(v, "i"), "i")(x))
    same("in_axes", bt.pmap(lambda v, w: v * w - bt.lax.pmean(v, "i"), "i", in_axes=(1, None))(x, np.float32(3)),
         jax.pmap(lambda v, w: v * w - jax.lax.pmean(v, "i"), "i", in_axes=(1, None))(x, np.float32(3)))
    same("axis_index", bt.pmap(lambda v: bt.lax.axis_index("i"), "i")(x[:2]),
         jax.pmap(lambda v: jax.lax.axis_index("i"), "i")(x[:2]))
    try:
        bt.pmap(lambda v: v, "i")(np.ones((5, 2), np.float32)); print("too_many BAD")
    except ValueError:
        print("too_many OK")
    mesh = bt.make_mesh((4,), ("d",))
    with bt.set_mesh(mesh):
        r = bt.reshard(x, bt.P("d"))
    print("reshard", "OK" if isinstance(r, bt.ShardedArray) and r.sharding.spec == bt.P("d") and np.allclose(np.asarray(r), x) else "BAD")
    s = bt.NamedSharding(mesh, bt.P("d"))
    arrs = [bt.device_put(x[i:i + 1], d) for i, d in enumerate(bt.devices())]
    m = bt.make_array_from_single_device_arrays((4, 3), s, arrs[::-1])
    print("single_device_arrays", "OK" if np.allclose(np.asarray(m), x) else "BAD")
    m = bt.make_array_from_process_local_data(s, x)
    print("process_local", "OK" if np.allclose(np.asarray(m), x) and [sh.data.shape for sh in m.addressable_shards] == [(1, 3)] * 4 else "BAD")
    """
)


def test_pmap_and_sharded_constructors_on_4_devices():
    # 4 devices of baton's default platform (CPU, or the simulated device).
    env = dict(os.environ, BATON_NUM_CPU_DEVICES="4", BATON_NUM_SIM_DEVICES="4",
               JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=4")
    out = subprocess.run([sys.executable, "-c", _PMAP_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split("\n")
    for name in ["psum", "in_axes", "axis_index", "too_many", "reshard", "single_device_arrays",
                 "process_local"]:
        assert f"{name} OK" in lines, out.stdout


def test_pmap_single_device_here():
    n = bt.local_device_count()
    x = np.arange(n * 3, dtype=F32).reshape(n, 3)
    _close(bt.pmap(lambda v: v + bt.lax.psum(v, "i"), "i")(x), np.asarray(
        jax.pmap(lambda v: v + jax.lax.psum(v, "i"), "i")(x)) if jax.local_device_count() == n else x * 2)


# ---- jax.nn.dot_product_attention ----

B_, T_, S_, N_, K_, H_ = 2, 5, 7, 4, 2, 8
Q = RNG.normal(size=(B_, T_, N_, H_)).astype(F32)
KK = RNG.normal(size=(B_, S_, K_, H_)).astype(F32)
V = RNG.normal(size=(B_, S_, K_, H_)).astype(F32)
BIAS = RNG.normal(size=(B_, N_, T_, S_)).astype(F32)
MASK = RNG.random((B_, 1, T_, S_)) > 0.3
QL = np.array([3, 5], np.int32)
KL = np.array([7, 4], np.int32)
ATT_CASES = [
    {}, dict(bias=BIAS), dict(bias=BIAS[:1, :1]), dict(mask=MASK), dict(is_causal=True),
    dict(scale=0.3, local_window_size=2), dict(local_window_size=(1, 3)),
    dict(query_seq_lengths=QL, key_value_seq_lengths=KL),
    dict(is_causal=True, bias=BIAS, query_seq_lengths=QL),
    dict(return_residual=True, is_causal=True), dict(implementation="xla"),
]


@pytest.mark.parametrize("kw", ATT_CASES)
def test_dot_product_attention(kw):
    _same(bt.nn.dot_product_attention(Q, KK, V, **kw),
          jax.nn.dot_product_attention(Q, KK, V, **kw), rtol=1e-5, atol=1e-5)


def test_dot_product_attention_3d_jit_grad_bf16():
    _close(bt.nn.dot_product_attention(Q[0], KK[0], V[0]),
           jax.nn.dot_product_attention(Q[0], KK[0], V[0]), atol=1e-5)
    f = bt.jit(lambda q, k, v: bt.nn.dot_product_attention(q, k, v, mask=MASK))
    _close(f(Q, KK, V), jax.nn.dot_product_attention(Q, KK, V, mask=MASK), atol=1e-5)
    gb = bt.grad(lambda q, k, v: (bt.nn.dot_product_attention(q, k, v, bias=BIAS, is_causal=True) ** 2).sum(),
                 argnums=(0, 1, 2))(Q, KK, V)
    gj = jax.grad(lambda q, k, v: (jax.nn.dot_product_attention(q, k, v, bias=BIAS, is_causal=True) ** 2).sum(),
                  argnums=(0, 1, 2))(Q, KK, V)
    _same(gb, gj, rtol=1e-4, atol=1e-4)
    bf = [a.astype(jnp.bfloat16) for a in (Q, KK, V)]
    _close(np.asarray(bt.nn.dot_product_attention(*bf, is_causal=True), F32),
           np.asarray(jax.nn.dot_product_attention(*bf, is_causal=True), F32), atol=1e-2)
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        bt.nn.dot_product_attention(Q[:, :, :3], KK, V)
    with pytest.raises(NotImplementedError, match="cudnn"):
        bt.nn.dot_product_attention(Q, KK, V, implementation="cudnn")


# ---- jax.numpy additions ----

UX = np.array([3, 1, np.nan, 1, 2, np.nan, 7], F32)
UX2 = np.array([[1, 2], [3, 4], [1, 2], [0, 5]], np.int32)


@pytest.mark.parametrize(
    "kw",
    [{}, dict(return_index=True), dict(return_inverse=True), dict(return_counts=True),
     dict(return_index=True, return_inverse=True, return_counts=True), dict(size=8),
     dict(size=8, fill_value=-1, return_counts=True, return_index=True), dict(equal_nan=False)],
)
def test_unique(kw):
    _same(bnp.unique(UX, **kw), jnp.unique(UX, **kw))


@pytest.mark.parametrize(
    "kw", [dict(axis=0), dict(axis=1, return_inverse=True, return_counts=True),
           dict(axis=0, size=5, return_index=True), dict(return_inverse=True)]
)
def test_unique_2d(kw):
    _same(bnp.unique(UX2, **kw), jnp.unique(UX2, **kw))


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"])
def test_unique_array_api(name):
    _same(getattr(bnp, name)(UX2), getattr(jnp, name)(UX2))
    _same(getattr(bnp, name)(UX, size=9), getattr(jnp, name)(UX, size=9))


SA = np.array([5, 1, 3, 3, 9, 0], np.int32)
SB = np.array([3, 4, 5, 5, 11], np.int32)


@pytest.mark.parametrize("name", ["union1d", "setdiff1d", "setxor1d", "intersect1d"])
def test_set_operations(name):
    _same(getattr(bnp, name)(SA, SB), getattr(jnp, name)(SA, SB))
    _same(getattr(bnp, name)(SA, SB, assume_unique=True) if name != "union1d" else bnp.union1d(SB, SA),
          getattr(jnp, name)(SA, SB, assume_unique=True) if name != "union1d" else jnp.union1d(SB, SA))


def test_set_operations_sizes_and_jit():
    _same(bnp.intersect1d(SA, SB, return_indices=True), jnp.intersect1d(SA, SB, return_indices=True))
    _same(bnp.union1d(SA, SB, size=10, fill_value=-1), jnp.union1d(SA, SB, size=10, fill_value=-1))
    _same(bnp.setdiff1d(SA, SB, size=6), jnp.setdiff1d(SA, SB, size=6))
    _same(bnp.setdiff1d(SA, SB, size=6, fill_value=9), jnp.setdiff1d(SA, SB, size=6, fill_value=9))
    _same(bt.jit(lambda v: bnp.unique(v, size=5))(SA), jax.jit(lambda v: jnp.unique(v, size=5))(SA))
    with pytest.raises(Exception, match="size="):
        bt.jit(lambda v: bnp.unique(v))(SA)


def test_i0_kaiser_nextafter_spacing():
    v = np.linspace(-4, 4, 11).astype(F32)
    _close(bnp.i0(v), jnp.i0(v))
    _close(bnp.i0(np.arange(3)), jnp.i0(np.arange(3)))
    _close(bt.grad(lambda t: bnp.i0(t).sum())(v), jax.grad(lambda t: jnp.i0(t).sum())(v))
    for m in [0, 1, 2, 7, 12]:
        _close(bnp.kaiser(m, 3.5), jnp.kaiser(m, 3.5))
    _close(bnp.nextafter(v, F32(0)), jnp.nextafter(v, F32(0)))
    _close(bnp.nextafter(1, 2), jnp.nextafter(1, 2))
    sp = np.array([0, -0.0, 1, -1, 1e-40, 3e38, np.inf, np.nan], F32)
    _close(bnp.spacing(sp), jnp.spacing(sp))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sp16 = sp.astype(np.float16)
    _close(bnp.spacing(sp16), jnp.spacing(sp16))


def test_sort_complex_mask_indices_bits():
    c = np.array([3 + 1j, 1 - 2j, 1 + 0j, -1 + 5j], np.complex64)
    _close(bnp.sort_complex(c), jnp.sort_complex(c))
    _close(bnp.sort_complex(np.array([3, 1, 2], np.int32)), jnp.sort_complex(np.array([3, 1, 2], np.int32)))
    _same(bnp.mask_indices(4, bnp.triu, 1), jnp.mask_indices(4, jnp.triu, 1))
    bits = np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1, 1], [0, 1, 1, 0, 1, 1, 0, 0, 0, 1]], np.int32)
    for kw in [{}, dict(axis=1), dict(axis=0, bitorder="little"), dict(axis=-1)]:
        _close(bnp.packbits(bits, **kw), jnp.packbits(bits, **kw))
    u = np.array([[7, 200], [13, 255]], np.uint8)
    for kw in [{}, dict(axis=1), dict(axis=0, bitorder="little"), dict(count=5),
               dict(count=-3, axis=1), dict(axis=1, count=20)]:
        _close(bnp.unpackbits(u, **kw), jnp.unpackbits(u, **kw))
    with pytest.raises(TypeError):
        bnp.unpackbits(u.astype(np.int32))


def test_save_load_and_dtype_names():
    f = io.BytesIO()
    bnp.save(f, bnp.arange(4.0))
    f.seek(0)
    y = bnp.load(f)
    assert isinstance(y, bt.Array)
    _close(y, np.arange(4.0, dtype=F32))
    for name in ["bool", "single", "double", "float_", "int_", "csingle", "cdouble", "complex_",
                 "character", "flexible", "object_", "ComplexWarning"]:
        assert np.dtype(getattr(bnp, name)) == np.dtype(getattr(jnp, name)) if name not in (
            "character", "flexible", "ComplexWarning") else getattr(bnp, name) is getattr(jnp, name), name
    assert bnp.euler_gamma == jnp.euler_gamma
    assert bnp.zeros(2, bnp.single).dtype == jnp.zeros(2, jnp.single).dtype


def test_polyfit():
    x = np.linspace(-1, 1, 12).astype(F32)
    y = (3 * x**2 - x + 0.5 + 0.1 * RNG.normal(size=12)).astype(F32)
    y2 = np.stack([y, 2 * y], 1)
    w = np.linspace(1, 2, 12).astype(F32)
    tol = dict(rtol=1e-4, atol=1e-4)
    _same(bnp.polyfit(x, y, 2), jnp.polyfit(x, y, 2), **tol)
    _same(bnp.polyfit(x, y2, 3), jnp.polyfit(x, y2, 3), **tol)
    _same(bnp.polyfit(x, y, 2, w=w), jnp.polyfit(x, y, 2, w=w), **tol)
    _same(bnp.polyfit(x, y, 2, full=True), jnp.polyfit(x, y, 2, full=True), **tol)
    _same(bnp.polyfit(x, y, 2, cov=True), jnp.polyfit(x, y, 2, cov=True), rtol=1e-3, atol=1e-3)
    _same(bnp.polyfit(x, y2, 2, cov="unscaled"), jnp.polyfit(x, y2, 2, cov="unscaled"), rtol=1e-3, atol=1e-3)
    _same(bt.jit(lambda a, b: bnp.polyfit(a, b, 2))(x, y), jnp.polyfit(x, y, 2), **tol)
    with pytest.raises(TypeError, match="1D vector"):
        bnp.polyfit(y2, y, 1)


def test_histogramdd_histogram2d():
    s = RNG.normal(size=(50, 3)).astype(F32)
    w = RNG.random(50).astype(F32)
    _same(bnp.histogramdd(s), jnp.histogramdd(s))
    kw = dict(bins=[3, 4, 5], range=[(-1, 1), (-2, 2), (-3, 3)], density=True)
    _same(bnp.histogramdd(s, **kw), jnp.histogramdd(s, **kw))
    _same(bnp.histogramdd(s, bins=4, weights=w), jnp.histogramdd(s, bins=4, weights=w))
    _same(bnp.histogram2d(s[:, 0], s[:, 1]), jnp.histogram2d(s[:, 0], s[:, 1]))
    _same(bnp.histogram2d(s[:, 0], s[:, 1], bins=(3, 6), density=True),
          jnp.histogram2d(s[:, 0], s[:, 1], bins=(3, 6), density=True))
    e = np.linspace(-2, 2, 5).astype(F32)
    _same(bnp.histogram2d(s[:, 0], s[:, 1], bins=e), jnp.histogram2d(s[:, 0], s[:, 1], bins=e))
    f = bt.jit(lambda a, b: bnp.histogram2d(a, b, bins=4, range=[(-2, 2), (-2, 2)]))
    _same(f(s[:, 0], s[:, 1]), jnp.histogram2d(s[:, 0], s[:, 1], bins=4, range=[(-2, 2), (-2, 2)]))


@pytest.mark.parametrize(
    "args", [(2, 3), (1, 3, 2), (8, 4), (-3, 2), (4,), (None,)]
)
def test_ds_indexing(args):
    x = np.arange(10, dtype=F32)
    _close(bnp.asarray(x)[bt.ds(*args)], jnp.asarray(x)[jax.ds(*args)])


def test_ds_mixed_keys_jit_grad():
    y = np.arange(24, dtype=F32).reshape(4, 6)
    _close(bnp.asarray(y)[1, bt.ds(2, 3)], jnp.asarray(y)[1, jax.ds(2, 3)])
    _close(bnp.asarray(y)[bt.ds(1, 2), ::2], jnp.asarray(y)[jax.ds(1, 2), ::2])
    _close(bnp.asarray(y)[..., bt.ds(3, 2)], jnp.asarray(y)[..., jax.ds(3, 2)])
    _close(bnp.asarray(y)[None, bt.ds(1, 2)], jnp.asarray(y)[None, jax.ds(1, 2)])
    fb = bt.jit(lambda v, i: v[bt.ds(i, 2), 1])
    fj = jax.jit(lambda v, i: v[jax.ds(i, 2), 1])
    for i in (0, 3, 5):
        _close(fb(y, i), fj(y, i))
    _close(bt.grad(lambda v, i: (v[bt.ds(i, 2)] ** 2).sum())(y, 1),
           jax.grad(lambda v, i: (v[jax.ds(i, 2)] ** 2).sum())(y, 1))
    with pytest.raises(TypeError, match="bt.ds"):
        bnp.asarray(y)[bt.ds(0, 2), np.array([0, 1])]


def test_memory_space_device_put():
    assert [(m.name, m.value) for m in bt.memory.Space] == [
        (m.name, m.value) for m in jax.memory.Space
    ]
    x = bnp.ones(3)
    for space in ("Device", "Host"):
        yb = bt.device_put(x, getattr(bt.memory.Space, space))
        yj = jax.device_put(jnp.ones(3), getattr(jax.memory.Space, space))
        assert yb.sharding.memory_kind == yj.sharding.memory_kind
        _close(yb, yj)
    f = bt.jit(lambda v: bt.device_put(v * 2, bt.memory.Space.Host))
    assert f(x).sharding.memory_kind == "pinned_host"
    with pytest.raises(ValueError, match="Any"):
        bt.device_put(x, bt.memory.Space.Any)


def test_allow_f16_reductions():
    x = np.ones(4, np.float16)
    with jax.allow_f16_reductions(False), pytest.raises(ValueError) as ej:
        jax.lax.reduce_sum(x, (0,))
    with bt.allow_f16_reductions(False):
        with pytest.raises(ValueError) as eb:
            bt.lax.reduce_sum(x, (0,))
        _close(bnp.sum(x), jnp.sum(x))  # jnp.sum is not affected either
        _close(bt.lax.reduce_sum(x.astype(F32), (0,)), jax.lax.reduce_sum(x.astype(F32), (0,)))
    assert str(eb.value).split(" is not")[0].split("[")[0] == str(ej.value).split(" is not")[0].split("[")[0]
    _close(bt.lax.reduce_sum(x, (0,)), jax.lax.reduce_sum(x, (0,)))


def test_transfer_guard_common_ops_agree_with_jax():
    def outcomes(mod, rnd, guard):
        x = mod.ones(3)
        cases = {
            "arange": lambda: mod.arange(5), "key": lambda: rnd.key(0),
            "sum": lambda: mod.sum(x), "x*x": lambda: x * x, "x[0]": lambda: x[0],
            "x[1:]": lambda: x[1:], "where": lambda: mod.where(x > 0, x, x),
            "reshape": lambda: x.reshape(3, 1), "astype": lambda: x.astype(mod.int32),
            "concat": lambda: mod.concatenate([x, x]), "at set": lambda: x.at[0].set(x[1]),
        }
        out = {}
        with guard:
            for name, fn in cases.items():
                try:
                    fn()
                    out[name] = "ok"
                except RuntimeError as e:
                    assert "isallowed host-to-device" in str(e)
                    out[name] = "disallowed"
        return out

    assert outcomes(bnp, bt.random, bt.transfer_guard("disallow")) == outcomes(
        jnp, jax.random, jax.transfer_guard("disallow")
    )
