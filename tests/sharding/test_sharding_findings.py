"""Issue 37's findings on sharded arrays, each against JAX on 4 CPU devices
(JAX runs in a subprocess, _findings_jax.py, since it reads its device
count at start-up; the cases there have the same names as here):

1. shard_map's out_specs check (JAX's check_vma): an output that varies
   over a mesh axis its out spec leaves out is an error, not device 0's
   block passed off as the whole result.
2. A bare PartitionSpec under bt.set_mesh, in_specs left out / None,
   None out specs, closed-over outputs, make_jaxpr of sharded arguments,
   dot's out_sharding.
3. AxisType, make_mesh(axis_types=), get_mesh/set_mesh, reshard,
   auto_axes/explicit_axes, typeof(x).sharding, lax.pcast,
   lax.with_sharding_constraint.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton.sharding import AxisType, NamedSharding
from baton.sharding import PartitionSpec as P

pytest.importorskip("jax")

HERE = os.path.dirname(__file__)
X = np.arange(8.0, dtype=np.float32)
X2 = np.arange(16.0, dtype=np.float32).reshape(4, 4)
Y = np.arange(2.0, dtype=np.float32)
SPEC_I = P("i")
L = bt.lax


@pytest.fixture(scope="module")
def jax_results():
    env = {k: v for k, v in os.environ.items() if k != "BATON_NUM_CPU_DEVICES"}
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "_findings_jax.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def auto(shape=(4,), names=("i",)):
    return bt.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))


def explicit(shape=(4,), names=("i",)):
    return bt.make_mesh(shape, names, axis_types=(AxisType.Explicit,) * len(shape))


def smap(f, out, ins=SPEC_I, x=X, **kw):
    return bt.shard_map(f, mesh=auto(), in_specs=ins, out_specs=out, **kw)(x)


def smap2(f, out, **kw):
    mesh = auto((2, 2), ("i", "j"))
    return bt.shard_map(f, mesh=mesh, in_specs=P("i", "j"), out_specs=out, **kw)(X2)


def under(mesh, fn):
    with bt.set_mesh(mesh):
        return fn()


def spec_of(a):
    parts = list(a.sharding.spec)
    while parts and parts[-1] is None:
        parts.pop()
    return [list(p) if isinstance(p, tuple) else p for p in parts]


def same_as_jax(jax_results, name, fn):
    """Runs baton's case and compares it with JAX's: the same error type,
    or the same values, shape and (trimmed) spec."""
    want = jax_results[name]
    if "error" in want:
        with pytest.raises(Exception) as info:
            fn()
        assert type(info.value).__name__ == want["error"], info.value
        return info.value
    got = fn()
    if isinstance(got, list):
        assert got == want["value"]
        return got
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want["value"]))
    assert list(np.shape(got)) == want["shape"]
    if "spec" in want:
        assert spec_of(got) == want["spec"], (got.sharding, want["spec"])
    return got


# ---- 1: the out_specs check -------------------------------------------------

CHECK_CASES = {
    "identity_P()": lambda: smap(lambda b: b, P()),
    "identity_P()_unchecked": lambda: smap(lambda b: b, P(), check_vma=False),
    "psum_P()": lambda: smap(lambda b: L.psum(b, "i"), P()),
    "pmean_P()": lambda: smap(lambda b: L.pmean(b, "i"), P()),
    "pmax_P()": lambda: smap(lambda b: L.pmax(b, "i"), P()),
    "const_P()": lambda: smap(lambda b: bnp.ones(3), P()),
    "psum_scalar_P()": lambda: smap(lambda b: L.psum(1.0, "i"), P()),
    "replicated_in_P()": lambda: smap(lambda b: b * 2, P(), ins=P()),
    "all_gather_P()": lambda: smap(lambda b: L.all_gather(b, "i"), P()),
    "axis_index_P()": lambda: smap(lambda b: L.axis_index("i"), P()),
    "ppermute_P()": lambda: smap(
        lambda b: L.ppermute(L.psum(b, "i"), "i", [(k, (k + 1) % 4) for k in range(4)]),
        P(),
    ),
    "pytree_bad_leaf": lambda: smap(
        lambda b: {"a": b, "s": L.psum(b, "i")}, {"a": P(), "s": P()}
    ),
    "pytree_ok": lambda: smap(
        lambda b: {"a": b, "s": L.psum(b, "i")}, {"a": P("i"), "s": P()}
    )["a"],
    "jit_inside_bad": lambda: smap(lambda b: bt.jit(lambda c: c * 2)(b), P()),
    "jit_inside_ok": lambda: smap(
        lambda b: bt.jit(lambda c: c * 2)(L.psum(b, "i")), P()
    ),
    "2d_psum_i_keep_j": lambda: smap2(lambda b: L.psum(b, "i"), P(None, "j")),
    "2d_psum_i_P()": lambda: smap2(lambda b: L.psum(b, "i"), P()),
    "2d_psum_ij_P()": lambda: smap2(lambda b: L.psum(b, ("i", "j")), P()),
    "2d_all_to_all_P(None,j)": lambda: smap2(
        lambda b: L.all_to_all(L.psum(b, "i"), "i", 0, 0, tiled=True), P(None, "j")
    ),
    "pcast_varying_P()": lambda: smap(
        lambda b: L.pcast(bnp.ones(2), "i", to="varying"), P()
    ),
    "pcast_varying_P(i)": lambda: smap(
        lambda b: L.pcast(bnp.ones(2), "i", to="varying"), P("i")
    ),
    "fori_dep": lambda: smap(
        lambda b: L.fori_loop(
            0, 3, lambda i, c: c + b, L.pcast(bnp.zeros(2), "i", to="varying")
        ),
        P(),
    ),
    "fori_inv": lambda: smap(
        lambda b: L.fori_loop(0, 3, lambda i, c: c + 1, L.psum(b, "i")), P()
    ),
    "scan_dep": lambda: smap(
        lambda b: L.scan(
            lambda c, e: (c + e, c), L.pcast(bnp.zeros(()), "i", to="varying"), b
        )[0],
        P(),
    ),
    "scan_inv": lambda: smap(
        lambda b: L.scan(lambda c, e: (c + e, c), 0.0, L.psum(b, "i"))[0], P()
    ),
    "cond_pred_dep": lambda: smap(
        lambda b: L.cond(b[0] > 100, lambda: bnp.ones(2), lambda: bnp.zeros(2)), P()
    ),
    "vmap_inv": lambda: smap(lambda b: L.psum(bt.vmap(lambda e: e * 2)(b), "i"), P()),
}


@pytest.mark.parametrize("name", sorted(CHECK_CASES))
def test_out_specs_check_as_jax(jax_results, name):
    same_as_jax(jax_results, name, CHECK_CASES[name])


def test_out_specs_error_names_output_axis_and_remedies():
    mesh = auto((2, 2), ("i", "j"))
    f = bt.shard_map(
        lambda b: {"a": L.psum(b, "j"), "b": L.psum(b, ("i", "j"))},
        mesh=mesh,
        in_specs=P("i", "j"),
        out_specs={"a": P(), "b": P()},
    )
    with pytest.raises(ValueError) as info:
        f(X2)
    msg = str(info.value)
    assert "output 0 (out['a'])" in msg and "axis 'i'" in msg
    assert "out['b']" not in msg  # psum over both axes: replicated
    assert "psum" in msg and "check_vma=False" in msg and "out spec" in msg
    # check_rep=False (the older name) skips the check too
    g = bt.shard_map(
        lambda b: b, mesh=mesh, in_specs=P("i", "j"), out_specs=P(), check_rep=False
    )
    np.testing.assert_array_equal(np.asarray(g(X2)), X2[:2, :2])


def test_out_specs_check_traces_once_per_signature(monkeypatch):
    # The check traces the body (nothing runs, nothing is allocated) and its
    # verdict is cached per argument signature; a body run per device (on
    # threads) is called once per device and call.
    from baton import _shard_map

    monkeypatch.setattr(_shard_map, "compile_bodies", False)
    calls = []

    def body(b):
        calls.append(1)
        return L.psum(b, "i")

    f = bt.shard_map(body, mesh=auto(), in_specs=P("i"), out_specs=P())
    out = f(X)
    np.testing.assert_array_equal(np.asarray(out), X.reshape(4, 2).sum(0))
    assert len(calls) == 4 + 1  # one call per device, and the check's trace
    del out
    f(X)
    assert len(calls) == 4 + 1 + 4  # cached: no second trace


def test_a_compiled_body_is_traced_twice_per_signature_and_never_again():
    # The check's trace, then the compiled body's; later calls run the
    # compiled program on every device without calling the body.
    from baton import _shard_map

    calls = []

    def body(b):
        calls.append(1)
        return L.psum(b, "i")

    f = bt.shard_map(body, mesh=auto(), in_specs=P("i"), out_specs=P())
    for _ in range(3):
        out = f(X)
        np.testing.assert_array_equal(np.asarray(out), X.reshape(4, 2).sum(0))
    assert len(calls) == 2
    assert _shard_map.compiled(f, X) is True


def test_pbroadcast_keeps_its_operands_variance():
    # JAX gives pbroadcast's result its operand's type (its CPU backend
    # cannot run pbroadcast, so this is checked against the rule itself).
    np.testing.assert_array_equal(
        np.asarray(smap(lambda b: L.pbroadcast(L.psum(b, "i"), "i", 0), P())),
        X.reshape(4, 2).sum(0),
    )
    with pytest.raises(ValueError, match="varies over"):
        smap(lambda b: L.pbroadcast(b, "i", 0), P())


def test_dependencies_read_from_program_text():
    from baton import _shard_map_vma

    def f(a, b, c):
        d = bt.lax.cond(a.sum() > 0, lambda: a * 2, lambda: a)
        return d, b + 1, bnp.ones(2), c * 0

    jaxpr = bt.make_jaxpr(f)(np.ones(2, np.float32), np.ones(2, np.float32), 1.0)
    params, deps = _shard_map_vma.dependencies(str(jaxpr))
    assert len(params) == 3
    a, b, c = params
    assert deps == [{a}, {b}, set(), {c}]


def test_failed_check_runs_no_device():
    calls = []

    def body(b):
        calls.append(1)
        return b * 2

    before = [bt.memory_stats(d)["bytes_in_use"] for d in bt.devices()]
    x = bt.device_put(X, NamedSharding(auto(), P("i")))
    with pytest.raises(ValueError, match="Nothing ran"):
        bt.shard_map(body, mesh=auto(), in_specs=P("i"), out_specs=P())(x)
    assert len(calls) == 1  # the check's trace only: no device ran the body
    del x
    assert [bt.memory_stats(d)["bytes_in_use"] for d in bt.devices()] == before


def test_out_specs_check_falls_back_to_values_when_untraceable():
    # A body reading a collective's value on the host cannot be traced with
    # it; the check then compares the devices' values.
    def reads_host(b):
        s = L.psum(b, "i")
        return s * float(np.asarray(s).sum() > 0)

    np.testing.assert_array_equal(
        np.asarray(smap(reads_host, P())), X.reshape(4, 2).sum(0)
    )

    def varies(b):
        return b * float(np.asarray(L.psum(b, "i")).sum() > 0)

    with pytest.raises(ValueError, match="varies over"):
        smap(varies, P())


# ---- 2: specs and placement -------------------------------------------------

SPEC_CASES = {
    "device_put_P_no_mesh": lambda: bt.device_put(X, P("i")),
    "device_put_P_mesh": lambda: under(auto(), lambda: bt.device_put(X, P("i"))),
    "in_specs_omitted_auto": lambda: bt.shard_map(
        lambda b: b, mesh=auto(), out_specs=P("i")
    )(X),
    "in_specs_omitted_explicit": lambda: under(
        explicit(),
        lambda: bt.shard_map(lambda b: b * 2, out_specs=P("i"))(
            bt.device_put(X, P("i"))
        ),
    ),
    "in_specs_mismatch_explicit": lambda: under(
        explicit(),
        lambda: bt.shard_map(lambda b: b * 2, in_specs=P(), out_specs=P("i"))(
            bt.device_put(X, P("i"))
        ),
    ),
    "in_specs_None": lambda: smap(lambda b: b, P(), ins=None),
    "static_int": lambda: bt.shard_map(
        lambda b, n: b * n, mesh=auto(), in_specs=(P("i"), None), out_specs=P("i")
    )(X, 3),
    "static_array": lambda: bt.shard_map(
        lambda b, c: b + c, mesh=auto(), in_specs=(P("i"), None), out_specs=P("i")
    )(X, bnp.ones(2)),
    "out_None_leaf": lambda: smap(lambda b: (b, None), (P("i"), None))[0],
    "out_None_for_array": lambda: smap(lambda b: b, None),
    "closed_over_P()": lambda: smap(lambda b: bnp.asarray(Y), P()),
    "closed_over_P(i)": lambda: smap(lambda b: bnp.asarray(Y), P("i")),
    # Arrays the body creates are the device's own (they used to land on
    # device 0, and the body failed with "arguments are on different
    # devices").
    "created_in_body": lambda: smap(lambda b: b + bnp.ones(2) * bnp.arange(2.0), P("i")),
    "created_in_body_2d": lambda: smap2(lambda b: b @ bnp.eye(2) + bnp.zeros((2, 2)), P("i", "j")),
    "dot_out_sharding": lambda: under(
        explicit(),
        lambda: bnp.dot(
            bt.device_put(X2, P("i")), bnp.asarray(X2[:, :2]), out_sharding=P("i")
        ),
    ),
    "dot_out_sharding_auto_axis": lambda: under(
        auto(),
        lambda: bnp.dot(
            bt.device_put(X2, P("i")), bnp.asarray(X2[:, :2]), out_sharding=P("i")
        ),
    ),
    "dot_contract_out_sharding_P()": lambda: under(
        explicit(),
        lambda: bnp.dot(
            bt.device_put(X, P("i")), bt.device_put(X, P("i")), out_sharding=P()
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_specs_and_placement_as_jax(jax_results, name):
    same_as_jax(jax_results, name, SPEC_CASES[name])


def test_device_put_bare_spec_places_blocks_as_named_sharding():
    mesh = auto((2, 2), ("i", "j"))
    with bt.set_mesh(mesh):
        a = bt.device_put(X2, P("i", "j"))
        tree = bt.device_put({"u": X2, "v": X}, {"u": P("j"), "v": P("i")})
    b = bt.device_put(X2, NamedSharding(mesh, P("i", "j")))
    assert a.sharding == b.sharding
    assert [s.index for s in a.addressable_shards] == [
        s.index for s in b.addressable_shards
    ]
    assert tree["u"].sharding == NamedSharding(mesh, P("j"))
    np.testing.assert_array_equal(np.asarray(tree["v"]), X)


def test_arrays_created_in_the_body_are_on_its_device():
    seen = {}

    def body(b):
        z = bnp.zeros(2)
        seen[b.device] = z.device
        return b + z

    out = bt.shard_map(body, mesh=auto(), in_specs=P("i"), out_specs=P("i"))(X)
    np.testing.assert_array_equal(np.asarray(out), X)
    assert seen == {d: d for d in bt.devices()}
    # The caller's own default is untouched.
    assert bnp.zeros(2).device == bt.devices()[0]


def test_default_device_places_new_arrays_on_this_thread_only():
    import threading

    d0, d1, d2 = bt.devices()[:3]
    with bt.default_device(d1):
        assert bnp.ones(2).device == d1
        assert bt.device_put(np.ones(2, np.float32)).device == d1
        assert bt.jit(lambda: bnp.arange(3))().device == d1
        with bt.default_device(d2):
            assert bnp.ones(2).device == d2
        assert bnp.ones(2).device == d1
        other = []
        t = threading.Thread(target=lambda: other.append(bnp.ones(2).device))
        t.start()
        t.join()
        assert other == [d0]  # another thread keeps its own default
    assert bnp.ones(2).device == d0
    with bt.default_device("cpu"):
        assert bnp.ones(2).device == bt.devices("cpu")[0]
    with pytest.raises(TypeError, match="default_device"):
        with bt.default_device(3):
            pass


def test_device_ids_in_one_process_are_the_local_indices():
    for k, d in enumerate(bt.devices()):
        assert d.id == d.local_hardware_id == k
        assert d.process_index == 0


def test_static_array_argument_is_copied_to_each_device():
    c = bnp.ones(2)  # on device 0
    seen = []

    def body(b, k):
        seen.append(k.device)
        return b + k

    bt.shard_map(body, mesh=auto(), in_specs=(P("i"), None), out_specs=P("i"))(X, c)
    assert sorted(d.id for d in seen) == [d.id for d in bt.devices()]


def test_make_jaxpr_and_eval_shape_of_sharded_arguments():
    mesh = auto()
    x = bt.device_put(X, NamedSharding(mesh, P("i")))
    jaxpr = bt.make_jaxpr(lambda a: (a * 2).sum())(x)
    assert [s.shape for s in jaxpr.in_avals] == [(8,)]  # the global shape, as JAX
    assert "f32[8]" in str(jaxpr)
    out = bt.eval_shape(lambda a: a.reshape(2, 4), x)
    assert out.shape == (2, 4) and out.dtype == np.float32


def test_dot_out_sharding_inside_jit_lays_the_result_out():
    mesh = explicit()
    with bt.set_mesh(mesh):
        x = bt.device_put(X, P("i"))
        out = bt.jit(lambda a: a * bnp.dot(a, a, out_sharding=P()))(x)
        y = bt.jit(lambda a: bnp.dot(a[:, None], a[None, :], out_sharding=P(None, "i")))(x)
    want = np.asarray(X)
    np.testing.assert_allclose(np.asarray(out), want * want.dot(want), rtol=1e-5)
    assert y.sharding.spec == P(None, "i")
    np.testing.assert_allclose(np.asarray(y), np.outer(want, want), rtol=1e-6)


# ---- 3: the newer API -------------------------------------------------------

API_CASES = {
    "typeof_auto": lambda: under(
        auto(), lambda: list(bt.typeof(bt.device_put(X, P("i"))).sharding.spec)
    ),
    "typeof_explicit": lambda: under(
        explicit(), lambda: list(bt.typeof(bt.device_put(X, P("i"))).sharding.spec)
    ),
    "reshard_P()": lambda: under(
        explicit(), lambda: bt.sharding.reshard(bt.device_put(X, P("i")), P())
    ),
    "wsc_auto": lambda: under(
        auto(),
        lambda: L.with_sharding_constraint(bt.device_put(X, P("i")), P()),
    ),
    "wsc_named_no_mesh": lambda: L.with_sharding_constraint(
        X, NamedSharding(auto(), P("i"))
    ),
    "wsc_explicit_mismatch": lambda: under(
        explicit(),
        lambda: L.with_sharding_constraint(bt.device_put(X, P("i")), P()),
    ),
    "explicit_axes": lambda: under(
        auto(),
        lambda: bt.sharding.explicit_axes(lambda a: a * 2, in_sharding=P("i"))(X),
    ),
    "auto_axes": lambda: under(
        explicit(),
        lambda: bt.sharding.auto_axes(lambda a: a * 2, out_sharding=P("i"))(
            bt.device_put(X, P("i"))
        ),
    ),
    "axis_types": lambda: (
        [str(t) for t in explicit().axis_types]
        + [str(t) for t in auto().axis_types]
        + [str(t) for t in AxisType]
    ),
}


@pytest.mark.parametrize("name", sorted(API_CASES))
def test_newer_api_as_jax(jax_results, name):
    same_as_jax(jax_results, name, API_CASES[name])


def test_set_mesh_get_mesh_and_axis_types():
    mesh = explicit()
    assert bt.sharding.get_mesh() is None
    with bt.set_mesh(mesh) as m:
        assert m is mesh and bt.sharding.get_mesh() is mesh
        assert bt.set_mesh is bt.sharding.set_mesh
    assert bt.sharding.get_mesh() is None
    assert mesh.axis_types == (AxisType.Explicit,)
    assert mesh.explicit_axes == ("i",) and mesh.auto_axes == ()
    assert bt.make_mesh((4,), ("i",)).axis_types == (AxisType.Auto,)  # baton's default
    assert mesh != auto()  # the axis types are part of a mesh
    with pytest.raises(ValueError, match="axis_types"):
        bt.make_mesh((4,), ("i",), axis_types=(AxisType.Auto, AxisType.Auto))
    assert bt.reshard is bt.sharding.reshard


def test_reshard_and_constraint_alias_an_array_already_placed():
    mesh = auto()
    x = bt.device_put(X, NamedSharding(mesh, P("i")))
    assert bt.reshard(x, NamedSharding(mesh, P("i"))) is x
    assert L.with_sharding_constraint(x, NamedSharding(mesh, P("i"))) is x
    # Inside jit on an unsharded argument the program runs on one device:
    # the constraint lays nothing out (tests/sharding/test_partitioning.py
    # has it on sharded arguments).
    out = bt.jit(lambda a: L.with_sharding_constraint(a * 2, NamedSharding(mesh, P())))(X)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(X) * 2)
    y = bt.device_put(X, NamedSharding(mesh, P("i")))
    out = bt.jit(lambda a: bt.reshard(a * 2, NamedSharding(mesh, P())))(y)
    assert out.sharding.spec == P()
    np.testing.assert_array_equal(np.asarray(out), np.asarray(X) * 2)


def test_pcast_refuses_what_baton_lacks():
    with pytest.raises(NotImplementedError, match="reduced"):
        smap(lambda b: L.pcast(b, "i", to="reduced"), P("i"))
    with pytest.raises(ValueError, match="Allowed"):
        smap(lambda b: L.pcast(b, "i", to="sideways"), P("i"))
    with pytest.raises(ValueError, match=r"outside bt\.shard_map"):
        L.pcast(X, "i", to="varying")
