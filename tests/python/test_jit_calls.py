"""bt.jit: pytrees, static arguments, caching, conversion of leaves, lower()
and compile(), closures, memory kinds, nesting, caches (DESIGN section 3)."""

import collections
import dataclasses
import functools
import gc
import textwrap
import threading
import warnings

import numpy as np
import pytest

import baton as bt
from baton import lax

from _util import data_ptr, floats, in_use, run_with_two_devices


def arr(n=4, start=0.0, **kw):
    return bt.device_put(floats(n, start), **kw)


# ---- Pytrees in and out ----

Pair = collections.namedtuple("Pair", ["a", "b"])


@bt.tree.register_dataclass
@dataclasses.dataclass(frozen=True)
class State:
    u: object
    v: object


@functools.partial(bt.tree.register_dataclass, meta_fields=("scale",))
@dataclasses.dataclass
class Scaled:
    x: object
    scale: float


def test_pytrees_in_and_out():
    x, y = arr(), arr(start=10)

    @bt.jit
    def f(d, pair, state, nothing, lst):
        assert nothing is None
        return {
            "sum": d["a"] + d["b"],
            "pair": Pair(pair.a * 2, None),
            "state": State(state.u + 1, state.v),
            "list": [lst[0], (lst[1],)],
        }

    out = f({"b": y, "a": x}, Pair(x, y), State(x, y), None, [x, y])
    np.testing.assert_array_equal(np.asarray(out["sum"]), floats(4) + floats(4, 10))
    assert isinstance(out["pair"], Pair) and out["pair"].b is None
    np.testing.assert_array_equal(np.asarray(out["pair"].a), floats(4) * 2)
    assert isinstance(out["state"], State)
    np.testing.assert_array_equal(np.asarray(out["state"].u), floats(4) + 1)
    assert out["state"].v is y  # returned unchanged: the same object
    assert out["list"][0] is x and out["list"][1][0] is y


def test_meta_fields_are_static():
    traces = []

    @bt.jit
    def f(s):
        traces.append(s.scale)
        return Scaled(s.x * s.scale, s.scale)

    x = arr()
    out = f(Scaled(x, 2.0))
    assert out.scale == 2.0
    np.testing.assert_array_equal(np.asarray(out.x), floats(4) * 2)
    f(Scaled(x, 2.0))
    f(Scaled(x, 3.0))
    assert traces == [2.0, 3.0]


def test_outputs_none_scalars_and_numpy():
    x = arr()
    out = bt.jit(lambda x: (None, 2.0, np.arange(3, dtype=np.int16), [x]))(x)
    assert out[0] is None
    assert isinstance(out[1], bt.Array) and out[1].dtype == np.float32
    assert out[2].dtype == np.int16
    assert out[3][0] is x
    assert bt.jit(lambda: None)() is None
    with pytest.raises(TypeError, match="returned a str"):
        bt.jit(lambda x: "hello")(x)


def test_undonated_parameter_returned_unchanged_is_the_same_object(no_gc):
    x = arr()
    pinned = arr(memory_kind="pinned_host")
    a, b, c = bt.jit(lambda x, p: (x, p, x + 1))(x, pinned)
    assert a is x and b is pinned
    assert c is not x and c.memory_kind == "device"


# ---- Caching and static arguments ----


def test_cache_keyed_by_structure_statics_and_leaf_specs():
    traces = []

    def fn(x, n, *, mode):
        traces.append((type(x).__name__, n, mode))
        return x * n if mode == "mul" else x + n

    f = bt.jit(fn, static_argnums=1, static_argnames="mode")
    x = arr()
    f(x, 2, mode="mul")
    f(x, 2, mode="mul")
    assert len(traces) == 1
    f(x, 3, mode="mul")  # static value
    f(x, 3, mode="add")  # static keyword
    f(arr(8), 3, mode="add")  # shape
    f(bt.device_put(np.ones(8, np.int32)), 3, mode="add")  # dtype
    f(arr(8, memory_kind="pinned_host"), 3, mode="add")  # memory kind
    assert len(traces) == 6 and f._cache_size() == 6
    # The same signature again hits the cache.
    f(arr(8), 3, mode="add")
    assert len(traces) == 6
    np.testing.assert_array_equal(np.asarray(f(x, 3, mode="add")), floats(4) + 3)


def test_static_argnums_cover_keywords_and_argnames_positions():
    seen = []

    def fn(x, n):
        seen.append(n)
        return x + n

    x = arr()
    f = bt.jit(fn, static_argnums=1)
    np.testing.assert_array_equal(np.asarray(f(x, n=5)), floats(4) + 5)
    g = bt.jit(fn, static_argnames="n")
    np.testing.assert_array_equal(np.asarray(g(x, 6)), floats(4) + 6)
    assert seen == [5, 6]  # Python values, not Tracers


def test_static_args_must_be_hashable():
    f = bt.jit(lambda x, opts: x, static_argnums=1)
    with pytest.raises(TypeError, match=r"hashable.*list"):
        f(arr(), [1, 2])


def test_unequal_statics_with_equal_hash_do_not_collide():
    class Key:
        def __init__(self, v):
            self.v = v

        def __hash__(self):
            return 1

        def __eq__(self, other):
            return self.v == other.v

    f = bt.jit(lambda x, k: x + k.v, static_argnums=1)
    x = arr()
    np.testing.assert_array_equal(np.asarray(f(x, Key(1))), floats(4) + 1)
    np.testing.assert_array_equal(np.asarray(f(x, Key(2))), floats(4) + 2)
    np.testing.assert_array_equal(np.asarray(f(x, Key(1))), floats(4) + 1)
    assert f._cache_size() == 2


def test_numpy_and_scalar_leaves_are_snapshotted():
    f = bt.jit(lambda x, s: x * s)
    a = floats(4)
    out = f(a, 2)
    a[:] = 100  # after the call: the result is unaffected
    np.testing.assert_array_equal(np.asarray(out), floats(4) * 2)
    assert out.dtype == np.float32
    assert f(np.ones(3, np.int32), 2).dtype == np.int32  # 2 -> int32 array
    assert f(1.5, 2.0).shape == ()
    with pytest.raises(TypeError, match=r"argument s .*not an array.*static"):
        f(a, "two")


def test_kwargs_and_defaults():
    @bt.jit
    def f(x, y=None, *, scale=2.0):
        return x * scale if y is None else (x + y) * scale

    x = arr()
    np.testing.assert_array_equal(np.asarray(f(x)), floats(4) * 2)
    np.testing.assert_array_equal(np.asarray(f(x, y=x, scale=3.0)), floats(4) * 6)
    np.testing.assert_array_equal(np.asarray(f(y=x, x=x)), floats(4) * 4)


def test_jitted_methods_and_wrapper_attributes():
    class Model:
        def __init__(self, w):
            self.w = w

        @functools.partial(bt.jit, static_argnums=0)
        def apply(self, x):
            return x * 2

    def documented(x):
        """Doubles x."""
        return x * 2

    m = Model(1)
    np.testing.assert_array_equal(np.asarray(m.apply(arr())), floats(4) * 2)
    f = bt.jit(documented)
    assert f.__doc__ == "Doubles x." and f.__name__ == "documented"
    assert f.__wrapped__ is documented
    assert "documented" in repr(f)


# ---- Option validation ----


def test_invalid_options_fail_at_creation():
    def fn(x, y, *, z):
        return x

    with pytest.raises(ValueError, match="donate_argnums contains 2"):
        bt.jit(fn, donate_argnums=2)
    with pytest.raises(ValueError, match="static_argnums contains -3"):
        bt.jit(fn, static_argnums=-3)
    with pytest.raises(ValueError, match="donate_argnames contains 'w'"):
        bt.jit(fn, donate_argnames="w")
    with pytest.raises(ValueError, match="both static and donated"):
        bt.jit(fn, static_argnums=0, donate_argnums=0)
    with pytest.raises(ValueError, match="both static and donated"):
        bt.jit(fn, static_argnums=0, donate_argnames="x")  # cross-filled
    with pytest.raises(ValueError, match="both static and donated"):
        bt.jit(fn, static_argnames="z", donate_argnames="z")
    with pytest.raises(TypeError, match="function"):
        bt.jit(3)
    with pytest.raises(TypeError, match="ints"):
        bt.jit(fn, donate_argnums=("0",))
    bt.jit(fn, donate_argnums=-1)  # negative: counted from the end
    bt.jit(lambda *a, **k: a, donate_argnames="anything")  # **kwargs


def test_invalid_options_fail_at_first_call_when_signature_is_open():
    f = bt.jit(lambda *args: args[0], donate_argnums=3)
    with pytest.raises(ValueError, match=r"donate_argnums contains 3.*only 1"):
        f(arr())
    f = bt.jit(max, static_argnums=2)  # a builtin: no signature
    with pytest.raises(ValueError, match="contains 2"):
        f(arr(), arr())


# ---- lower() / compile() ----


def test_lower_compile_memory_analysis_and_text_consume_nothing(no_gc):
    x, y = arr(1024), arr(1024)
    f = bt.jit(lambda x, y: (x * 2 + y, lax.sum(y)), donate_argnums=0)
    before = in_use()
    compiled = f.lower(x, y).compile()
    assert isinstance(compiled, bt.stages.Compiled)
    ma = compiled.memory_analysis()
    for name in (
        "argument_size_in_bytes",
        "output_size_in_bytes",
        "alias_size_in_bytes",
        "temp_size_in_bytes",
        "constant_size_in_bytes",
        "peak_memory_in_bytes",
    ):
        assert isinstance(getattr(ma, name), int)
    assert ma.argument_size_in_bytes == 8192
    assert ma.output_size_in_bytes == 4096 + 4
    assert ma.alias_size_in_bytes == 4096  # x * 2 + y written into x
    text = compiled.as_text()
    assert "func(" in text and "add" in text and "memory:" in text
    assert f.lower(x, y).as_text() == text
    # Nothing consumed, nothing run: device memory holds only the program's
    # constant (the scalar 2, rounded up to the allocator's granularity).
    assert not x.is_deleted() and in_use() - before < 1024
    before = in_use()
    # A call-site marker stays unused by lower().
    d = bt.donate(x)
    assert f.lower(d, y).compile().memory_analysis().alias_size_in_bytes == 4096
    assert not d.used and in_use() == before
    # The call does not compile again.
    n = f._cache_size()
    out = f(d, y)
    assert f._cache_size() == n and d.used
    np.testing.assert_array_equal(np.asarray(out[0]), floats(1024) * 3)


def test_compiled_is_callable_for_its_signature_only(no_gc):
    x, y = arr(1024), arr(1024)
    f = bt.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    compiled = f.lower(x, y).compile()
    n = f._cache_size()
    storage = data_ptr(x)
    before = in_use()
    out = compiled(x, y)
    # Same program, same donation: the output took x's storage.
    assert x.is_deleted() and data_ptr(out) == storage
    assert in_use() == before and f._cache_size() == n
    np.testing.assert_array_equal(np.asarray(out), floats(1024) * 3)
    # Other shapes are refused, not compiled; nothing is consumed.
    a, b = arr(16), arr(16)
    with pytest.raises(TypeError, match="compiled for other argument"):
        compiled(a, b)
    assert not a.is_deleted() and f._cache_size() == n


def test_lower_with_numpy_and_scalar_leaves():
    f = bt.jit(lambda x, s: x * s)
    ma = f.lower(np.ones((8,), np.float32), 2.0).compile().memory_analysis()
    assert ma.argument_size_in_bytes == 36 and ma.output_size_in_bytes == 32


# ---- Closures ----


def test_captured_arrays_are_hidden_arguments_never_constants(no_gc):
    w = arr(1024, start=1)
    f = bt.jit(lambda x: x * w)
    x = arr(1024)
    ma = f.lower(x).compile().memory_analysis()
    assert ma.constant_size_in_bytes == 0
    assert ma.argument_size_in_bytes == 8192  # x and w
    before = in_use()
    out = f(x).block_until_ready()
    assert in_use() == before + 4096  # only the output: w was not copied
    np.testing.assert_array_equal(np.asarray(out), floats(1024) * floats(1024, 1))
    assert bt.jit(lambda: w)() is w
    # Deleting the captured array: the next call says so.
    w.delete()
    with pytest.raises(bt.DeletedArrayError, match="captured"):
        f(x)


def test_captured_numpy_is_a_snapshot_constant():
    c = np.full(4, 3.0, np.float32)
    f = bt.jit(lambda x: x + c)
    x = arr()
    np.testing.assert_array_equal(np.asarray(f(x)), floats(4) + 3)
    c[:] = 100  # after tracing: the compiled program keeps its snapshot
    np.testing.assert_array_equal(np.asarray(f(x)), floats(4) + 3)
    assert f.lower(x).compile().memory_analysis().constant_size_in_bytes == 16


def test_mutation_between_uses_in_one_trace_keeps_program_order():
    c = np.zeros(4, np.float32)

    def fn(x):
        a = x + c
        c[:] = 1  # the second use sees the new values
        b = x + c
        return a, b

    a, b = bt.jit(fn)(arr())
    np.testing.assert_array_equal(np.asarray(a), floats(4))
    np.testing.assert_array_equal(np.asarray(b), floats(4) + 1)


def test_captured_numpy_used_many_times_is_stored_once():
    c = np.arange(256, dtype=np.float32)
    d = c.copy()  # equal content, another numpy array

    def fn(x):
        acc = x * c
        for _ in range(9):
            acc = acc + x * c
        return acc + d

    f = bt.jit(fn)
    x = arr(256)
    ma = f.lower(x).compile().memory_analysis()
    assert ma.constant_size_in_bytes == c.nbytes
    np.testing.assert_allclose(np.asarray(f(x)), floats(256) * c * 10 + c)


def test_dropping_a_jitted_function_drops_its_constants(no_gc):
    big = np.ones(1 << 18, np.float32)  # 1 MiB
    x = arr(1 << 18)
    bt.clear_caches()  # constants of earlier tests' programs
    before = in_use()
    f = bt.jit(lambda x: x + big * 3)
    out = f(x).block_until_ready()
    assert in_use() >= before + 2 * big.nbytes  # output + the stored constant
    del f
    assert in_use() == before + out.nbytes
    g = bt.jit(lambda x: x + big * 3)
    out2 = g(x).block_until_ready()
    assert in_use() == before + 2 * out.nbytes + big.nbytes
    bt.clear_caches()
    assert in_use() == before + 2 * out.nbytes
    assert g._cache_size() == 0
    g(x)  # recompiles
    assert g._cache_size() == 1
    del out2


def test_clear_caches_drops_captured_arrays(no_gc):
    bt.clear_caches()
    box = [arr(1 << 16)]
    f = bt.jit(lambda x: x + box[0])
    f(arr(1 << 16)).block_until_ready()
    base = in_use()
    box.clear()
    assert in_use() == base  # the compiled program keeps the array alive
    bt.clear_caches()
    assert in_use() == base - (1 << 18)


# ---- Memory kinds ----


def test_device_put_inside_jit_moves_between_kinds():
    x = arr(256)

    @bt.jit
    def f(x):
        y = x * 2
        return (
            bt.device_put(y, memory_kind="pinned_host"),
            y,
            bt.device_put({"u": y + 1}, memory_kind="unpinned_host"),
        )

    pinned, dev, tree = f(x)
    assert pinned.memory_kind == "pinned_host" and dev.memory_kind == "device"
    assert tree["u"].memory_kind == "unpinned_host"
    np.testing.assert_array_equal(np.asarray(pinned), floats(256) * 2)
    text = f.lower(x).compile().as_text()
    assert "transfer" in text and "pinned_host" in text


def test_device_put_inside_jit_of_host_data_is_a_constant():
    @bt.jit
    def f(x):
        c = bt.device_put(np.full(4, 2.0, np.float32))
        assert isinstance(c, lax.Tracer)
        return x * c

    x = arr()
    np.testing.assert_array_equal(np.asarray(f(x)), floats(4) * 2)
    assert f.lower(x).compile().memory_analysis().constant_size_in_bytes == 16
    with pytest.raises(TypeError, match="into"):
        bt.jit(lambda x: bt.device_put(x, into=x))(x)


def test_outputs_keep_their_kind():
    p = arr(memory_kind="pinned_host")
    u = arr(memory_kind="unpinned_host")
    out = bt.jit(
        lambda p, u: (p, u, p + 1, bt.device_put(p + u, memory_kind="unpinned_host"))
    )(p, u)
    assert [o.memory_kind for o in out] == [
        "pinned_host",
        "unpinned_host",
        "device",
        "unpinned_host",
    ]
    np.testing.assert_array_equal(np.asarray(out[3]), floats(4) * 2)


# ---- Nesting ----


def test_jit_inside_jit_is_inlined():
    inner_traces = []

    @bt.jit
    def inner(a, b):
        inner_traces.append(type(a).__name__)
        return a * b

    outer = bt.jit(lambda x: inner(x, 3.0) + 1)
    np.testing.assert_array_equal(np.asarray(outer(arr())), floats(4) * 3 + 1)
    assert inner_traces == ["Tracer"]
    assert inner._cache_size() == 0  # never compiled on its own
    text = outer.lower(arr()).compile().as_text()
    assert text.count("func(") == 1


def test_inner_jit_never_consumes_the_outer_array():
    w = arr(start=5)
    inner = bt.jit(lambda a: a + 1, donate_argnums=0)

    @bt.jit
    def outer(x):
        return inner(w) + inner(x) + inner(bt.donate(w))

    x = arr()
    out = outer(x)
    assert not w.is_deleted() and not x.is_deleted()
    np.testing.assert_array_equal(
        np.asarray(out), (floats(4, 5) + 1) * 2 + floats(4) + 1
    )


def test_lower_inside_a_trace():
    seen = []
    g = bt.jit(lambda a: a * 2)

    @bt.jit
    def f(x):
        seen.append(g.lower(np.ones(3, np.float32)).compile().memory_analysis())
        return x

    f(arr())
    assert seen[0].argument_size_in_bytes == 12


# ---- Devices and threads ----


def test_arguments_on_different_devices_are_refused():
    code = textwrap.dedent(
        """
        import numpy as np, baton as bt
        d0, d1 = bt.devices()
        x = bt.device_put(np.ones(4, np.float32), d0)
        y = bt.device_put(np.ones(4, np.float32), d1)
        f = bt.jit(lambda a, b: a + b, donate_argnums=0)
        try:
            f(x, {"b": y})
        except ValueError as e:
            assert "different devices" in str(e) and "b['b']" in str(e), e
        else:
            raise AssertionError("no error")
        assert not x.is_deleted()
        out = bt.jit(lambda a: a * 2)(y)
        assert out.device == d1
        out = bt.jit(lambda a: a + np.ones(4, np.float32))(y)
        assert out.device == d1
        w = bt.device_put(np.ones(4, np.float32), d1)
        try:
            bt.jit(lambda a: a + w)(x)
        except ValueError as e:
            assert "captured" in str(e), e
        else:
            raise AssertionError("no error")
        print("ok")
        """
    )
    run_with_two_devices(code)


def test_calls_from_many_threads():
    f = bt.jit(lambda x, k: x * k, static_argnums=1)
    x = arr(256)
    errors = []

    def work(k):
        try:
            for _ in range(50):
                out = f(x, k % 3)
            np.testing.assert_array_equal(np.asarray(out), floats(256) * (k % 3))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert f._cache_size() == 3


def test_jitted_function_in_a_reference_cycle_is_collected():
    class Holder:
        pass

    h = Holder()
    h.f = bt.jit(lambda x, holder: x, static_argnums=1)
    h.f(arr(), h)  # the cache key holds h, which holds f
    import weakref

    ref = weakref.ref(h)
    del h
    gc.collect()
    assert ref() is None


# ---- Python scalars passed to jit are weakly typed ----


def test_python_scalar_arguments_are_weakly_typed():
    import ml_dtypes

    bf16 = np.dtype(ml_dtypes.bfloat16)
    seen = []

    @bt.jit
    def f(x, s):
        seen.append((s.weak_type, x.weak_type, (s * 2).weak_type, (x * s).weak_type))
        return x * s, x * (s * 2), lax.where(x > 0, s, x), s

    x = bt.device_put(np.array([1, 2, 3], bf16))
    a, b, c, s = f(x, 0.5)
    assert seen == [(True, False, True, False)]
    assert a.dtype == b.dtype == c.dtype == bf16
    np.testing.assert_array_equal(a.astype(np.float32), [0.5, 1, 1.5])
    assert s.dtype == np.float32 and s.shape == ()  # the value itself: float32
    # A numpy scalar is strongly typed: float32 wins, and it is another signature.
    a2 = f(x, np.float32(0.5))[0]
    assert a2.dtype == np.float32 and f._cache_size() == 2
    i8 = bt.device_put(np.array([1, 2], np.int8))
    assert f(i8, 3)[0].dtype == np.int8
    assert f(i8, 0.5)[0].dtype == np.float32  # a float with integers: float32


def test_weak_scalar_argument_keeps_a_donated_bf16_step_in_place(no_gc):
    import ml_dtypes

    bf16 = np.dtype(ml_dtypes.bfloat16)
    step = bt.jit(lambda p, lr: {k: v - lr * v for k, v in p.items()}, donate_argnums=0)
    params = {"w": bt.device_put(np.ones(4096, bf16))}
    with warnings.catch_warnings():
        warnings.simplefilter("error", bt.DonationWarning)  # every buffer reused
        new = step(params, 0.25)
    assert new["w"].dtype == bf16 and params["w"].is_deleted()
    np.testing.assert_array_equal(np.asarray(new["w"]).astype(np.float32), 0.75)
