"""Top-level names of ``jax`` that no other comparison test read, against
JAX on one CPU device: Device, device_get, block_until_ready, live_arrays,
clear_caches, log_compiles, make_jaxpr, make_mesh, set_mesh, reshard,
shard_map, make_array_from_*, process_count / process_index,
print_environment_info, transfer_guard_device_to_device, profiler,
distributed and experimental. Values, dtypes, shapes, types, errors and the
observable effects of the context managers are compared; text meant for
people (jaxprs, environment reports, log lines) is compared on what it
must say, not letter for letter."""

import gzip
import importlib
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding as JNamed  # noqa: E402
from jax.sharding import PartitionSpec as JP  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402
from baton.sharding import NamedSharding as BNamed  # noqa: E402
from baton.sharding import PartitionSpec as BP  # noqa: E402

F32 = np.float32
X = np.arange(12, dtype=F32).reshape(4, 3) / 7


def _close(b, j, **tol):
    tol = tol or dict(rtol=1e-6, atol=1e-6)
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, **tol)


# ---- devices and processes ----


@pytest.mark.cpu_default_device
def test_device_attributes_match_jax():
    bd, jd = bt.devices()[0], jax.devices()[0]
    assert isinstance(bd, bt.Device) and isinstance(jd, jax.Device)
    assert not isinstance(object(), bt.Device) and not isinstance(object(), jax.Device)
    assert (bd.platform, bd.id, bd.process_index) == (
        jd.platform,
        jd.id,
        jd.process_index,
    )
    assert str(bd) == str(jd) and repr(bd) == repr(jd)
    # Hashable and equal to itself: usable as a dict key, as JAX's are.
    assert {bd: 1}[bt.devices()[0]] == 1 and {jd: 1}[jax.devices()[0]] == 1
    # The device an array lives on is that Device.
    assert isinstance(bnp.ones(2).device, bt.Device)
    assert bnp.ones(2).device == bd and jnp.ones(2).device == jd


def test_process_count_and_index_match_jax():
    assert bt.process_count() == jax.process_count() == 1
    assert bt.process_index() == jax.process_index() == 0
    assert type(bt.process_count()) is type(jax.process_count()) is int
    assert type(bt.process_index()) is type(jax.process_index()) is int


def test_print_environment_info_reports_versions_like_jax(capsys):
    b = bt.print_environment_info(return_string=True)
    j = jax.print_environment_info(return_string=True)
    assert isinstance(b, str) and isinstance(j, str)
    for text in (b, j):  # both name numpy's and Python's versions
        assert np.__version__ in text
        assert "{}.{}.{}".format(*sys.version_info[:3]) in text
    assert bt.__version__ in b
    # Without return_string both print the report and return None.
    assert bt.print_environment_info() is None
    assert capsys.readouterr().out.strip() == b.strip()
    assert jax.print_environment_info() is None
    assert capsys.readouterr().out.strip() == j.strip()


# ---- host transfer, readiness, live arrays, caches ----


def test_device_get_returns_numpy_copies_like_jax():
    tree_b = {"a": bnp.asarray(X), "b": [bnp.arange(3), 2.5], "c": None}
    tree_j = {"a": jnp.asarray(X), "b": [jnp.arange(3), 2.5], "c": None}
    gb, gj = bt.device_get(tree_b), jax.device_get(tree_j)
    assert bt.tree.structure(gb) == bt.tree.structure({"a": 0, "b": [0, 0], "c": None})
    assert jax.tree_util.tree_structure(gj) == jax.tree_util.tree_structure(
        {"a": 0, "b": [0, 0], "c": None}
    )
    for key in ("a",):
        assert type(gb[key]) is type(gj[key]) is np.ndarray
        _close(gb[key], gj[key])
    assert type(gb["b"][0]) is type(gj["b"][0]) is np.ndarray
    _close(gb["b"][0], gj["b"][0])
    assert gb["b"][1] == gj["b"][1] == 2.5 and gb["c"] is gj["c"] is None
    # numpy inputs pass through unchanged in value.
    _close(bt.device_get(X), jax.device_get(X))


def test_block_until_ready_returns_its_argument_tree():
    xb, xj = bnp.asarray(X) * 2, jnp.asarray(X) * 2
    tb = {"x": xb, "y": [xb, (xb,)]}
    tj = {"x": xj, "y": [xj, (xj,)]}
    rb, rj = bt.block_until_ready(tb), jax.block_until_ready(tj)
    assert rb["x"] is xb and rb["y"][0] is xb and rb["y"][1][0] is xb
    assert rj["x"] is xj and rj["y"][0] is xj and rj["y"][1][0] is xj
    assert bt.tree.structure(rb) == bt.tree.structure(tb)
    _close(rb["x"], rj["x"])
    # A lone array comes back as itself; non-array leaves are left alone.
    assert bt.block_until_ready(xb) is xb and jax.block_until_ready(xj) is xj
    assert bt.block_until_ready(3) == jax.block_until_ready(3) == 3


def test_live_arrays_hold_new_arrays_and_not_deleted_ones():
    for api, m in ((bt, bnp), (jax, jnp)):
        x = m.asarray(X) + 1
        live = api.live_arrays()
        assert isinstance(live, list)
        assert any(a is x for a in live), api.__name__
        x.delete()
        assert not any(a is x for a in api.live_arrays()), api.__name__


def test_clear_caches_makes_jit_trace_again_like_jax():
    counts = {}
    for api, m in ((bt, bnp), (jax, jnp)):
        calls = []

        def f(x, calls=calls):
            calls.append(1)
            return x * 2

        g = api.jit(f)
        g(m.ones(2))
        g(m.ones(2))
        assert len(calls) == 1
        assert api.clear_caches() is None
        _close(g(m.ones(2)), np.full(2, 2, F32))
        counts[api.__name__] = len(calls)
    assert counts["baton"] == counts["jax"] == 2


def test_log_compiles_logs_a_compile_only_while_enabled(caplog):
    def mine_b(x):
        return x * 3

    def mine_j(x):
        return x * 3

    with caplog.at_level(logging.WARNING):
        with bt.log_compiles():
            _close(bt.jit(mine_b)(bnp.ones(3)), np.full(3, 3, F32))
        with jax.log_compiles():
            _close(jax.jit(mine_j)(jnp.ones(3)), np.full(3, 3, F32))
    msgs = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("mine_b" in s and "tracing" in s.lower() for s in msgs), msgs
    assert any("mine_j" in s and "tracing" in s.lower() for s in msgs), msgs
    caplog.clear()

    def quiet_b(x):
        return x + 1

    def quiet_j(x):
        return x + 1

    with caplog.at_level(logging.WARNING):
        with bt.log_compiles(False):
            bt.jit(quiet_b)(bnp.ones(3))
        with jax.log_compiles(False):
            jax.jit(quiet_j)(jnp.ones(3))
        bt.jit(lambda x: x - 1)(bnp.ones(3))  # outside: nothing either
    msgs = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not any("quiet_" in s for s in msgs), msgs


# ---- jaxprs ----


def _sig(avals):
    return [(tuple(a.shape), np.dtype(a.dtype)) for a in avals]


@pytest.mark.parametrize(
    "case",
    ["unary", "two_outputs", "reduce_int"],
)
def test_make_jaxpr_avals_and_ops_match_jax(case):
    def build(m):
        if case == "unary":
            return (lambda x: m.sin(x) * 2), (X,), ("sin", "mul")
        if case == "two_outputs":
            return (
                (lambda x, y: (x @ y, m.exp(x).sum())),
                (X, X.T),
                ("dot", "exp", "reduce"),
            )
        return (
            (lambda x: m.sum(x, axis=0)),
            (np.arange(6, dtype=np.int32).reshape(2, 3),),
            ("reduce",),
        )

    fb, args, ops = build(bnp)
    fj, _, _ = build(jnp)
    b = bt.make_jaxpr(fb)(*args)
    j = jax.make_jaxpr(fj)(*args)
    assert _sig(b.in_avals) == _sig(j.in_avals)
    assert _sig(b.out_avals) == _sig(j.out_avals)
    tb, tj = str(b), str(j)
    for op in ops:
        assert op in tb, (op, tb)
        assert op in tj, (op, tj)


def test_make_jaxpr_static_argnums_and_return_shape_like_jax():
    def f(x, n):
        return x.reshape(n, -1) * n

    b, bshape = bt.make_jaxpr(f, static_argnums=1, return_shape=True)(X, 2)
    j, jshape = jax.make_jaxpr(f, static_argnums=1, return_shape=True)(X, 2)
    assert _sig(b.in_avals) == _sig(j.in_avals) == [((4, 3), np.dtype(F32))]
    assert _sig(b.out_avals) == _sig(j.out_avals) == [((2, 6), np.dtype(F32))]
    assert (tuple(bshape.shape), np.dtype(bshape.dtype)) == (
        tuple(jshape.shape),
        np.dtype(jshape.dtype),
    )
    # Nothing runs: an abstract argument is enough, in both.
    sb = bt.make_jaxpr(lambda x: x + 1)(bt.ShapeDtypeStruct((5,), np.int32))
    sj = jax.make_jaxpr(lambda x: x + 1)(jax.ShapeDtypeStruct((5,), np.int32))
    assert _sig(sb.out_avals) == _sig(sj.out_avals) == [((5,), np.dtype(np.int32))]


# ---- meshes, shardings, shard_map ----


def test_make_mesh_shape_names_and_devices_like_jax():
    for shape, names in (((1,), ("x",)), ((1, 1), ("data", "model"))):
        b, j = bt.make_mesh(shape, names), jax.make_mesh(shape, names)
        assert tuple(b.axis_names) == tuple(j.axis_names) == names
        assert dict(b.shape) == dict(j.shape)
        assert b.size == j.size == 1
        assert np.asarray(b.devices).shape == np.asarray(j.devices).shape == shape
        assert [d.id for d in np.asarray(b.devices).flat] == [
            d.id for d in np.asarray(j.devices).flat
        ]
    # More devices than there are.
    with pytest.raises(ValueError):
        bt.make_mesh((2,), ("x",))
    with pytest.raises(ValueError):
        jax.make_mesh((2,), ("x",))


def _jax_auto_mesh():
    # baton's meshes have no axis types (explicit sharding is issue 37):
    # compare with JAX's Auto axes, the behaviour of jax.sharding.Mesh.
    auto = jax.sharding.AxisType.Auto
    return jax.make_mesh((1,), ("x",), axis_types=(auto,))


def test_shard_map_on_a_one_device_mesh_gives_jaxs_values():
    def body(lax):
        return lambda a: a * 2 + lax.psum(a.sum(), "x")

    bm = bt.make_mesh((1,), ("x",))
    fb = bt.shard_map(body(bt.lax), mesh=bm, in_specs=BP("x"), out_specs=BP("x"))
    fj = jax.shard_map(
        body(jax.lax), mesh=_jax_auto_mesh(), in_specs=JP("x"), out_specs=JP("x")
    )
    _close(fb(X), fj(X), rtol=1e-6)
    # Under jit as well, and through JAX's older path in baton.
    _close(bt.jit(fb)(X), jax.jit(fj)(X), rtol=1e-6)
    # An axis name the mesh does not have is an error in both.
    with pytest.raises(ValueError):
        bt.shard_map(body(bt.lax), mesh=bm, in_specs=BP("y"), out_specs=BP("y"))(X)
    with pytest.raises(ValueError):
        jax.shard_map(
            body(jax.lax), mesh=_jax_auto_mesh(), in_specs=JP("y"), out_specs=JP("y")
        )(X)


def test_set_mesh_gives_shard_map_and_reshard_their_mesh():
    bm, jm = bt.make_mesh((1,), ("x",)), jax.make_mesh((1,), ("x",))
    with bt.set_mesh(bm):
        gb = bt.shard_map(lambda a: a + 1, in_specs=BP(), out_specs=BP())
        rb = bt.reshard(bnp.asarray(X), BP("x"))
        sb = gb(X)
    with jax.set_mesh(jm):
        gj = jax.shard_map(lambda a: a + 1, in_specs=JP(), out_specs=JP())
        rj = jax.reshard(jnp.asarray(X), JP("x"))
        sj = gj(X)
    _close(sb, sj)
    _close(rb, rj)
    assert isinstance(rb.sharding, BNamed) and isinstance(rj.sharding, JNamed)
    assert _spec(rb.sharding, 2) == _spec(rj.sharding, 2) == ("x", None)
    # After the block there is no mesh: a bare PartitionSpec is an error.
    with pytest.raises(ValueError):
        bt.reshard(bnp.asarray(X), BP("x"))
    with pytest.raises(ValueError):
        jax.reshard(jnp.asarray(X), JP("x"))


def _spec(sharding, ndim):
    """A NamedSharding's spec with the implied trailing Nones written out
    (JAX's explicit meshes write them, baton keeps the spec as given)."""
    spec = tuple(sharding.spec)
    return spec + (None,) * (ndim - len(spec))


def test_reshard_pytrees_onto_named_shardings_like_jax():
    # JAX reshards onto Explicit mesh axes (its make_mesh's default).
    bm, jm = bt.make_mesh((1,), ("x",)), jax.make_mesh((1,), ("x",))
    tb = {"a": bnp.asarray(X), "b": bnp.arange(4)}
    tj = {"a": jnp.asarray(X), "b": jnp.arange(4)}
    rb = bt.reshard(tb, {"a": BNamed(bm, BP(None, "x")), "b": BNamed(bm, BP("x"))})
    rj = jax.reshard(tj, {"a": JNamed(jm, JP(None, "x")), "b": JNamed(jm, JP("x"))})
    for k in tb:
        _close(rb[k], rj[k])
        assert _spec(rb[k].sharding, rb[k].ndim) == _spec(rj[k].sharding, rj[k].ndim)
    assert _spec(rb["a"].sharding, 2) == (None, "x")
    # One sharding for every leaf.
    rb2 = bt.reshard(tb, BNamed(bm, BP()))
    rj2 = jax.reshard(tj, JNamed(jm, JP()))
    for k in tb:
        _close(rb2[k], rj2[k])
        assert _spec(rb2[k].sharding, rb2[k].ndim) == _spec(
            rj2[k].sharding, rj2[k].ndim
        )
    # A spec longer than the array's rank is refused by both (JAX with an
    # internal AssertionError, baton with a ValueError that says why).
    with pytest.raises(ValueError, match="rank 1"):
        bt.reshard(bnp.arange(4), BNamed(bm, BP(None, "x")))
    with pytest.raises(AssertionError):
        jax.reshard(jnp.arange(4), JNamed(jm, JP(None, "x")))


def test_make_array_from_process_local_data_like_jax():
    bm, jm = bt.make_mesh((1,), ("x",)), _jax_auto_mesh()
    b = bt.make_array_from_process_local_data(BNamed(bm, BP("x")), X)
    j = jax.make_array_from_process_local_data(JNamed(jm, JP("x")), X)
    _close(b, j)
    assert tuple(b.sharding.spec) == tuple(j.sharding.spec) == ("x",)
    b2 = bt.make_array_from_process_local_data(BNamed(bm, BP()), X, X.shape)
    j2 = jax.make_array_from_process_local_data(JNamed(jm, JP()), X, X.shape)
    _close(b2, j2)


def test_make_array_from_single_device_arrays_like_jax():
    bm, jm = bt.make_mesh((1,), ("x",)), _jax_auto_mesh()
    pb = [bt.device_put(X, bt.devices()[0])]
    pj = [jax.device_put(X, jax.devices()[0])]
    b = bt.make_array_from_single_device_arrays(X.shape, BNamed(bm, BP("x")), pb)
    j = jax.make_array_from_single_device_arrays(X.shape, JNamed(jm, JP("x")), pj)
    _close(b, j)
    assert tuple(b.shape) == tuple(j.shape) == X.shape
    assert tuple(b.sharding.spec) == tuple(j.sharding.spec) == ("x",)
    # A shard of the wrong shape is refused by both.
    with pytest.raises(ValueError):
        bt.make_array_from_single_device_arrays((4, 5), BNamed(bm, BP("x")), pb)
    with pytest.raises(ValueError):
        jax.make_array_from_single_device_arrays((4, 5), JNamed(jm, JP("x")), pj)


# ---- transfer_guard_device_to_device ----


def test_transfer_guard_device_to_device_state_like_jax():
    for api in (bt, jax):
        st = api.transfer_guard_device_to_device
        with st("disallow"):
            # Work on one device moves nothing between devices: all allowed,
            # and host-to-device transfers are not this guard's business.
            m = bnp if api is bt else jnp
            x = m.ones(3)
            y = api.jit(lambda v: v * 2)(x) + x
            z = api.device_put(x, api.devices()[0])
            w = api.device_put(np.ones(3, F32))
            _close(y + z + w, np.full(3, 5, F32))
        with pytest.raises(ValueError):
            with st("sometimes"):
                pass
    assert bt.transfer_guard_device_to_device.value == "allow"


_D2D = textwrap.dedent(
    """
    import json, os, sys
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["BATON_NUM_CPU_DEVICES"] = "2"
    import numpy as np
    import jax
    jax.config.update("jax_num_cpu_devices", 2)
    import baton as bt
    out = {}
    for api in (bt, jax):
        d0, d1 = api.devices()[:2]
        x = api.device_put(np.arange(3, dtype=np.float32), d0)
        for mode in ("allow", "log", "disallow", "log_explicit", "disallow_explicit"):
            try:
                with api.transfer_guard_device_to_device(mode):
                    y = api.device_put(x, d1)
                assert np.asarray(y).tolist() == [0.0, 1.0, 2.0]
                assert set(y.devices()) == {d1}
                out[api.__name__ + " " + mode] = "ok"
            except RuntimeError as e:
                assert "isallowed device-to-device" in str(e), str(e)
                out[api.__name__ + " " + mode] = "disallowed"
        with api.transfer_guard_device_to_device("disallow_explicit"):
            api.device_put(np.ones(2, np.float32), d1)  # host-to-device: allowed
            api.device_put(x, d0)  # stays on its device: no transfer
    print(json.dumps(out))
    """
)


def test_transfer_guard_device_to_device_between_two_cpu_devices():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), BATON_PLATFORMS="cpu")
    r = subprocess.run(
        [sys.executable, "-c", _D2D],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    import json

    out = json.loads(r.stdout.strip().splitlines()[-1])
    for mode in ("allow", "log", "disallow", "log_explicit", "disallow_explicit"):
        assert out["baton " + mode] == out["jax " + mode], (mode, out)
    assert out["jax disallow_explicit"] == "disallowed"
    # What bt.transfer_guard_device_to_device names here, checked in-process.
    assert (
        bt.transfer_guard_device_to_device.name == "jax_transfer_guard_device_to_device"
    )


# ---- profiler ----


def _files(root):
    return [
        os.path.join(d, f)
        for d, _, fs in os.walk(root)
        for f in fs
        if os.path.getsize(os.path.join(d, f)) > 0
    ]


def test_profiler_start_stop_trace_writes_a_trace_like_jax(tmp_path):
    for api, m in ((bt, bnp), (jax, jnp)):
        d = tmp_path / api.__name__
        api.profiler.start_trace(str(d))
        (m.ones((64, 64)) @ m.ones((64, 64))).block_until_ready()
        api.profiler.stop_trace()
        assert _files(d), api.__name__
        # Stopping again with no trace running is an error in both.
        with pytest.raises(RuntimeError):
            api.profiler.stop_trace()
    # The context-manager form writes one as well.
    for api, m in ((bt, bnp), (jax, jnp)):
        d = tmp_path / (api.__name__ + "_ctx")
        with api.profiler.trace(str(d)):
            m.arange(10).sum().block_until_ready()
        assert _files(d), api.__name__


def test_profiler_save_device_memory_profile_like_jax(tmp_path):
    keep_b, keep_j = bnp.ones((256, 256)), jnp.ones((256, 256))
    pb, pj = tmp_path / "b.prof", tmp_path / "j.prof"
    assert bt.profiler.save_device_memory_profile(str(pb)) is None
    assert jax.profiler.save_device_memory_profile(str(pj)) is None
    rb, rj = pb.read_bytes(), pj.read_bytes()
    assert rb[:2] == rj[:2] == b"\x1f\x8b"  # gzip, both
    assert len(gzip.decompress(rb)) > 0 and len(gzip.decompress(rj)) > 0
    del keep_b, keep_j


# ---- distributed, experimental ----


def test_distributed_is_not_initialized_in_one_process_like_jax():
    assert bt.distributed.is_initialized() is jax.distributed.is_initialized() is False
    # Shutting down what was never started is a no-op in both.
    assert bt.distributed.shutdown() is None
    assert jax.distributed.shutdown() is None
    assert bt.distributed.is_initialized() is False
    for api in (bt, jax):
        assert callable(api.distributed.initialize)


def test_experimental_is_a_package_with_shard_maps_old_path():
    for name, api in (("baton", bt), ("jax", jax)):
        pkg = api.experimental
        assert hasattr(pkg, "__path__"), name  # a package, as JAX's
        sub = importlib.import_module(name + ".experimental.shard_map")
        assert sub.__name__ == name + ".experimental.shard_map"
    # JAX 0.10 emptied jax.experimental.shard_map (the function is
    # jax.shard_map now); baton keeps the old import working and it gives
    # jax.shard_map's values.
    from baton.experimental.shard_map import shard_map as old_b

    fb = old_b(
        lambda a: a * 3,
        mesh=bt.make_mesh((1,), ("x",)),
        in_specs=BP("x"),
        out_specs=BP("x"),
    )
    fj = jax.shard_map(
        lambda a: a * 3, mesh=_jax_auto_mesh(), in_specs=JP("x"), out_specs=JP("x")
    )
    _close(fb(X), fj(X))
    assert bt.experimental.shard_map.shard_map is bt.shard_map
