"""bt.Ref / bt.new_ref / bt.ref against JAX's mutable array references
(jax.new_ref, jax.ref; the Ref guide, docs.jax.dev/en/latest/array_refs.html):
the same programs run on both -- eager reads and writes, jit with Ref
arguments and closed-over Refs, Refs accumulated into inside fori_loop /
scan / while_loop / cond bodies, freeze, grad through a Ref created inside
the differentiated function -- and give the same values; JAX's errors
(returning a Ref from jit, a Ref passed twice, wrong dtype or shape) are
errors in baton too. Memory: a Ref owns one buffer, written in place
(bt.memory_stats() does not grow across writes, eager or jitted), freed by
free_ref, handed over by freeze."""

import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402


class _L:
    def __init__(self, api, np_):
        self.api, self.np = api, np_


JAX = _L(jax, jnp)
BT = _L(bt, bnp)


def _close(b, j, **tol):
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, rtol=1e-6, atol=1e-6, **tol)


def _both(prog):
    """Runs prog(L) on JAX and on baton; compares every leaf."""
    j = prog(JAX)
    b = prog(BT)
    jl = jax.tree_util.tree_leaves(j)
    bl = bt.tree.leaves(b)
    assert len(jl) == len(bl)
    for u, v in zip(bl, jl):
        _close(u, v)
    return b


def _stats():
    bt.effects_barrier()
    return bt.memory_stats()


# ---- the names ----


def test_names_match_jax_ref_module():
    public = sorted(n for n in dir(jax.ref) if not n.startswith("_"))
    for n in public:
        assert hasattr(bt.ref, n), n
    for n in ("Ref", "new_ref", "empty_ref", "freeze", "free_ref"):
        assert hasattr(jax, n) and hasattr(bt, n), n
        assert n in bt.__all__
    assert bt.ref.Ref is bt.Ref and bt.ref.new_ref is bt.new_ref
    assert isinstance(bt.new_ref(1.0), bt.Ref)
    with pytest.raises(TypeError):
        bt.Ref(bnp.zeros(3))


# ---- eager ----


def test_docstring_examples():
    def prog(L):
        api, np_ = L.api, L.np
        out = []
        r = api.new_ref(np_.arange(5))
        r[3] = 100
        out.append(api.ref.freeze(r))
        r = api.new_ref(np_.arange(5))
        out.append(api.ref.get(r, slice(1, 3)))
        out.append(r[1:3])
        out.append(r[...])
        out.append(api.ref.swap(r, 3, 10))
        out.append(r[...])
        r = api.new_ref(np_.int32(5))
        out.append(api.ref.swap(r, ..., 10))
        out.append(r[...])
        r = api.new_ref(np_.zeros(5))
        api.ref.set(r, 1, 10.0)
        out.append(r[...])
        r = api.new_ref(np_.arange(5))
        api.ref.addupdate(r, 2, 10)
        r[2] += 10
        out.append(r[...])
        r = api.new_ref(np_.int32(2))
        r[...] += 10
        out.append(r[...])
        return out

    _both(prog)


def test_repr_and_attributes():
    j = jax.new_ref(jnp.arange(12.0).reshape(3, 4))
    b = bt.new_ref(bnp.arange(12.0).reshape(3, 4))
    assert repr(b) == repr(j)
    assert str(b) == str(j)
    assert repr(bt.new_ref(bnp.arange(5))) == repr(jax.new_ref(jnp.arange(5)))
    assert b.shape == j.shape and b.dtype == j.dtype
    assert b.ndim == j.ndim and b.size == j.size and len(b) == len(j)
    assert repr(b.aval) == repr(j.aval) == "Ref{float32[3,4]}"
    assert isinstance(b.aval, bt.ref.AbstractRef)
    assert repr(bt.typeof(b)) == repr(jax.typeof(j))
    assert b.aval.shape == j.aval.shape and b.aval.dtype == j.aval.dtype
    # A Ref is a pytree leaf, as in JAX.
    assert bt.tree.leaves(b) == [b]
    assert len(jax.tree_util.tree_leaves(j)) == 1
    with pytest.raises(TypeError):
        len(bt.new_ref(1.0))
    with pytest.raises(TypeError):
        bnp.sin(bt.new_ref(1.0))  # math needs the value: sin(ref[...])


def test_reads_and_writes_follow_numpy_indexing():
    def prog(L):
        api, np_ = L.api, L.np
        r = api.new_ref(np_.zeros((4, 5), np_.float32))
        r[1] = np_.ones(5)
        r[2, 3] = 7.0
        r[:, 0] = np_.arange(4.0)
        r[3, 1:4] = np_.array([1.0, 2.0, 3.0])
        r[np_.array([0, 2])] = np_.full((2, 5), 9.0)
        r[0] += 1.0
        api.ref.addupdate(r, (slice(None), 4), np_.ones(4))
        out = [r[...], r[1:3], r[:, ::2], r[-1], r[np_.array([3, 0])], r[2, 3]]
        out.append(api.ref.get(r))
        return out

    _both(prog)


def test_new_ref_copies_its_initial_value():
    def prog(L):
        api, np_ = L.api, L.np
        x = np_.arange(3.0)
        r = api.new_ref(x)
        r[0] = 100.0
        r[...] += 1.0
        return x, r[...]

    _both(prog)


def test_a_read_is_a_snapshot():
    def prog(L):
        api, np_ = L.api, L.np
        r = api.new_ref(np_.zeros(3))
        before = r[...]
        r[...] = np_.ones(3)
        return before, r[...]

    _both(prog)


@pytest.mark.parametrize(
    "ref_dtype,idx,value",
    [
        ("float32", 0, 1),  # a Python int into a float Ref
        ("float32", 0, True),
        ("float32", ..., np.arange(3)),  # int32 array into float32
        ("float32", 0, np.float16(1)),
        ("int32", 0, 2.5),  # a Python float into an int Ref
        ("bfloat16", 0, np.float32(1.5)),
        ("float32", slice(0, 2), 1.0),  # no broadcasting: shape (2,) wanted
        ("float32", ..., np.ones((1, 3), np.float32)),
        ("float32", ..., np.ones(2, np.float32)),
    ],
)
def test_invalid_writes_raise_as_in_jax(ref_dtype, idx, value):
    jr = jax.new_ref(jnp.zeros(3, ref_dtype))
    with pytest.raises(ValueError):
        jr[idx] = value
    br = bt.new_ref(bnp.zeros(3, ref_dtype))
    with pytest.raises(ValueError, match=r"Invalid (dtype|shape) for `swap`"):
        br[idx] = value
    _close(br[...], jr[...])  # nothing written


@pytest.mark.parametrize(
    "ref_dtype,value",
    [
        ("float32", 2.5),
        ("int32", 7),
        ("int32", np.int8(3)),  # any integer into an integer Ref is cast
        ("int32", np.uint32(3)),
        ("float32", np.float64(1.25)),  # 64-bit host data is 32-bit with x64 off
        ("bfloat16", 1.5),
    ],
)
def test_implicit_casts_as_in_jax(ref_dtype, value):
    def prog(L):
        r = L.api.new_ref(L.np.zeros(3, ref_dtype))
        r[0] = value
        return r[...].astype(np.float32)

    _both(prog)


def test_addupdate_wants_the_refs_dtype():
    for api, np_ in ((jax, jnp), (bt, bnp)):
        r = api.new_ref(np_.zeros(3))
        with pytest.raises(ValueError):
            api.ref.addupdate(r, 0, 1)  # int32 into float32
        ri = api.new_ref(np_.zeros(3, np.int32))
        with pytest.raises(ValueError):
            api.ref.addupdate(ri, 0, np_.int8(1))


def test_freeze_and_free_invalidate():
    r = bt.new_ref(bnp.arange(5))
    r[3] = 100
    v = bt.freeze(r)
    _close(v, jax.ref.freeze(jax.new_ref(jnp.array([0, 1, 2, 100, 4]))))
    for use in (lambda: r[...], lambda: r.__setitem__(0, 1), lambda: bt.freeze(r)):
        with pytest.raises(ValueError, match="frozen"):
            use()
    r = bt.new_ref(bnp.zeros(3))
    assert bt.free_ref(r) == () == jax.ref.free_ref(jax.new_ref(jnp.zeros(3)))
    with pytest.raises(ValueError, match="freed"):
        r[0]
    with pytest.raises(TypeError):
        bt.new_ref(bt.new_ref(1.0))
    with pytest.raises(TypeError):
        bt.new_ref((1.0, 2.0))
    with pytest.raises(ValueError):
        bt.new_ref(1.0, kind="unknown")


def test_empty_ref():
    ty = jax.ShapeDtypeStruct((3,), jnp.float32)

    @jax.jit
    def j():
        r = jax.ref.empty_ref(ty)
        r[...] = jnp.arange(3.0)
        return jax.ref.freeze(r)

    @bt.jit
    def b():
        r = bt.empty_ref(bt.ShapeDtypeStruct((3,), bnp.float32))
        r[...] = bnp.arange(3.0)
        return bt.freeze(r)

    _close(b(), j())
    # Outside a trace baton allocates it (JAX has no eager rule).
    r = bt.empty_ref(bnp.zeros((2, 3), bnp.int32))
    assert r.shape == (2, 3) and r.dtype == np.int32
    r[...] = bnp.ones((2, 3), bnp.int32)
    _close(r[...], np.ones((2, 3), np.int32))


# ---- memory ----

N = 1 << 20  # 4 MiB of float32


def test_eager_writes_update_the_buffer_in_place():
    r = bt.new_ref(bnp.zeros(N))
    writes = [
        lambda i: r.__setitem__(100 + i, 1.0),
        lambda i: r.__setitem__(slice(10, 20), bnp.ones(10)),
        lambda i: bt.ref.addupdate(r, 5, 2.0),
        lambda i: bt.ref.swap(r, 3, 4.0),
    ]
    for w in writes:  # compile first
        w(0)
    base = _stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    for i in range(30):
        for w in writes:
            w(i)
    s = _stats()
    assert s["bytes_in_use"] - base == 0
    # In place: never a second buffer of the Ref's size.
    assert s["peak_bytes_in_use"] - base < N * 4 // 4
    v = np.asarray(r[:20])
    assert v[3] == 4.0 and v[5] == 2.0 * 31 and v[15] == 1.0
    assert float(r[129]) == 1.0


def test_free_ref_releases_and_freeze_hands_over():
    base = _stats()["bytes_in_use"]
    r = bt.new_ref(bnp.zeros(N))
    assert _stats()["bytes_in_use"] - base == N * 4
    bt.free_ref(r)
    assert _stats()["bytes_in_use"] - base == 0
    r = bt.new_ref(bnp.ones(N))
    v = bt.freeze(r)  # the Ref's own buffer, no copy
    assert _stats()["bytes_in_use"] - base == N * 4
    del v
    assert _stats()["bytes_in_use"] - base == 0


def test_jit_with_a_ref_argument_updates_in_place():
    @bt.jit
    def step(x_ref, y):
        x_ref[...] += y
        x_ref[0] = 0.0

    r = bt.new_ref(bnp.zeros(N))
    y = bnp.ones(N)
    step(r, y)
    base = _stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    for _ in range(10):
        step(r, y)
    s = _stats()
    assert s["bytes_in_use"] - base == 0
    assert s["peak_bytes_in_use"] - base < N * 4 // 4  # the donated buffer reused
    v = np.asarray(r[:3])
    np.testing.assert_array_equal(v, [0.0, 11.0, 11.0])


def test_closed_over_ref_in_jit_updates_in_place():
    big = bt.new_ref(bnp.zeros(N))

    @bt.jit
    def inc():
        big[...] += 1.0

    inc()
    inc()
    base = _stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    for _ in range(10):
        inc()
    s = _stats()
    assert s["bytes_in_use"] - base == 0
    assert s["peak_bytes_in_use"] - base < N * 4 // 4
    assert float(big[7]) == 12.0


# ---- jit ----


def test_jit_with_ref_arguments():
    def prog(L):
        api, np_ = L.api, L.np

        @api.jit
        def f(x_ref, y):
            x_ref[...] += y
            x_ref[1] *= 2.0
            return x_ref[...] * 10

        r = api.new_ref(np_.zeros(3))
        outs = [f(r, 1.0) for _ in range(3)]
        return outs, r[...]

    _both(prog)


def test_jit_refs_in_pytrees_and_kwargs():
    def prog(L):
        api, np_ = L.api, L.np

        @api.jit
        def f(state, *, scale):
            state["a"][...] = state["b"] * scale
            state["c"][0] += 1
            return state["b"] + 1

        s = {
            "a": api.new_ref(np_.zeros(3)),
            "b": np_.arange(3.0),
            "c": api.new_ref(np_.zeros(2, np.int32)),
        }
        out = [f(s, scale=2.0), f(s, scale=3.0)]
        return out, s["a"][...], s["c"][...]

    _both(prog)


def test_ref_guide_closed_over_ref():
    def prog(L):
        api, np_ = L.api, L.np
        x_ref = api.new_ref(np_.zeros(3))

        @api.jit
        def f():
            x_ref[1] += 1.0

        before = x_ref[...]
        f()
        f()
        return before, x_ref[...]

    _both(prog)


def test_closed_over_refs_found_later_and_read_only():
    def prog(L):
        api, np_ = L.api, L.np
        seen = api.new_ref(np_.zeros(()))
        count = api.new_ref(np_.zeros((), np.int32))
        w = api.new_ref(np_.full(3, 2.0))

        def f(x, flag):
            count[...] += 1
            if flag:
                seen[...] += x.sum()
            return x * w[...]

        g = api.jit(f, static_argnums=1)
        outs = [g(np_.ones(3), False), g(np_.ones(3), True)]
        w[...] = np_.full(3, 3.0)
        outs.append(g(np_.ones(3), True))
        return outs, seen[...], count[...]

    _both(prog)


def test_refs_created_inside_jit():
    def prog(L):
        api, np_ = L.api, L.np

        @api.jit
        def f(x):
            r = api.new_ref(np_.zeros_like(x))
            r[...] = np_.sin(x)
            r[0] += 1.0
            v = r[...]
            return api.freeze(r) + v

        return f(np_.arange(4.0))

    _both(prog)


def test_jit_errors_as_jax():
    for api, np_ in ((jax, jnp), (bt, bnp)):

        @api.jit
        def ret(x_ref):
            return x_ref

        with pytest.raises(ValueError, match="cannot be returned"):
            ret(api.new_ref(np_.zeros(3)))

        @api.jit
        def make(api=api, np_=np_):
            return api.new_ref(np_.zeros(3))

        with pytest.raises(ValueError, match="cannot be returned"):
            make()

        @api.jit
        def two(a, b):
            a[...] += 1.0
            b[...] += 1.0

        r = api.new_ref(np_.zeros(2))
        with pytest.raises(ValueError):
            two(r, r)
        _close(r[...], np.zeros(2, np.float32))  # nothing consumed


def test_failed_jit_call_keeps_the_refs_value():
    @bt.jit
    def bad(x_ref):
        x_ref[...] += 1.0
        return bt.freeze(x_ref)  # an argument Ref cannot be frozen inside

    r = bt.new_ref(bnp.arange(3.0))
    with pytest.raises(ValueError, match="argument"):
        bad(r)
    _close(r[...], np.arange(3.0, dtype=np.float32))
    r[0] = 5.0
    _close(r[...], np.array([5.0, 1.0, 2.0], np.float32))


def test_ref_buffers_are_never_shared():
    @bt.jit
    def f(a, b, v):
        a[...] = v
        b[...] = a[...]
        return b[...]

    a, b = bt.new_ref(bnp.zeros(3)), bt.new_ref(bnp.zeros(3))
    v = bnp.full(3, 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = f(a, b, v)
        out = f(a, b, v)
    a[0] = 1.0
    b[1] = 2.0
    _close(v, np.full(3, 5.0, np.float32))
    _close(out, np.full(3, 5.0, np.float32))
    _close(a[...], np.array([1.0, 5.0, 5.0], np.float32))
    _close(b[...], np.array([5.0, 2.0, 5.0], np.float32))


# ---- control flow ----


@pytest.mark.parametrize("jitted", [True, False], ids=["jit", "eager"])
def test_fori_loop_accumulates_into_a_ref(jitted):
    def prog(L):
        api, np_ = L.api, L.np

        def f(x_ref):
            def body(i, carry):
                x_ref[i] += i * 1.0
                x_ref[...] += 0.5
                return carry + 1

            return api.lax.fori_loop(0, 3, body, 0)

        r = api.new_ref(np_.zeros(3))
        out = api.jit(f)(r) if jitted else f(r)
        return out, r[...]

    _both(prog)


@pytest.mark.parametrize("jitted", [True, False], ids=["jit", "eager"])
def test_scan_plumbs_values_out_through_a_ref(jitted):
    def prog(L):
        api, np_ = L.api, L.np

        def f(total_ref, xs):
            def body(c, x):
                total_ref[...] += x
                return c * 2.0, total_ref[...]

            return api.lax.scan(body, 1.0, xs)

        r = api.new_ref(np_.zeros(()))
        xs = np_.arange(5.0)
        out = api.jit(f)(r, xs) if jitted else f(r, xs)
        return out, r[...]

    _both(prog)


def test_while_cond_switch_and_nested_loops():
    def prog(L):
        api, np_ = L.api, L.np

        @api.jit
        def f(x_ref, p, k):
            def body(i):
                x_ref[0] += 1.0
                return i + 1

            api.lax.while_loop(lambda i: i < 4, body, 0)

            def yes():
                x_ref[1] = 10.0

            def no():
                x_ref[1] = -10.0

            api.lax.cond(p, yes, no)
            api.lax.switch(k, [lambda: None, lambda: x_ref.__setitem__(2, 3.0)])

            def outer(i, c):
                def inner(j, c2):
                    x_ref[3] += 1.0
                    return c2

                return api.lax.fori_loop(0, 2, inner, c)

            api.lax.fori_loop(0, 3, outer, 0)

        r = api.new_ref(np_.zeros(4))
        f(r, True, 1)
        a = r[...]
        f(r, False, 0)
        return a, r[...]

    _both(prog)


def test_scan_with_a_ref_created_inside_the_jitted_function():
    def prog(L):
        api, np_ = L.api, L.np

        @api.jit
        def f(xs):
            acc = api.new_ref(np_.zeros(()))

            def body(c, x):
                acc[...] += x * x
                return c, None

            api.lax.scan(body, 0.0, xs)
            return api.freeze(acc)

        return f(np_.arange(6.0))

    _both(prog)


# ---- differentiation and vmap ----


def test_grad_through_a_ref_created_inside():
    def prog(L):
        api, np_ = L.api, L.np

        def g(x):  # the Ref guide's example
            x_ref = api.new_ref(0.0)
            x_ref[...] = np_.sin(x)
            return x_ref[...]

        def h(x):
            r = api.new_ref(np_.zeros(3))
            r[...] = x * x
            r[1] += x[0]
            return api.freeze(r).sum()

        def k(xs):  # accumulated into inside a loop, then differentiated
            acc = api.new_ref(0.0)

            def body(i, c):
                acc[...] += xs[i] * xs[i]
                return c

            api.lax.fori_loop(0, xs.shape[0], body, 0)
            return api.freeze(acc)

        return (
            api.grad(k)(np_.arange(3.0)),
            api.grad(g)(1.0),
            api.jit(api.grad(g))(0.5),
            api.grad(h)(np_.arange(3.0)),
            api.jvp(g, (1.0,), (1.0,)),
        )

    out = _both(prog)
    np.testing.assert_allclose(float(out[1]), np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out[0]), [0.0, 2.0, 4.0])


def test_no_grad_no_remat_kind_stops_gradients():
    def prog(L):
        api = L.api

        def f(x):
            r = api.new_ref(0.0, kind="no_grad_no_remat")
            r[...] += x
            return api.freeze(r) + x * x

        return api.grad(f)(3.0)

    _both(prog)


def test_grad_writing_an_outside_ref_raises_in_both():
    for api in (jax, bt):
        counter = api.new_ref(0.0)

        def f(x, counter=counter):
            counter[...] += x
            return x * 2

        with pytest.raises(Exception, match=r"Ref|reference"):
            api.grad(f)(3.0)
    # baton also leaves the Ref as it was (JAX has written 3.0 by then).
    assert float(counter[...]) == 0.0


def test_vmap_of_a_function_using_a_ref_inside():
    def prog(L):
        api, np_ = L.api, L.np

        def f(x):
            r = api.new_ref(x)
            r[...] = r[...] * 2 + 1
            return api.freeze(r)

        return api.vmap(f)(np_.arange(3.0))

    _both(prog)


# ---- the call path's corner cases ----


def test_a_call_refused_while_parsing_gives_the_buffer_back():
    f = bt.jit(
        lambda x_ref, k: x_ref.__setitem__(..., x_ref[...] + len(k)), static_argnums=1
    )
    r = bt.new_ref(bnp.arange(3.0))
    with pytest.raises(TypeError, match="hashable"):
        f(r, [1, 2])  # the Ref's buffer was donated before the static was hashed
    _close(r[...], np.arange(3.0, dtype=np.float32))
    f(r, (1, 2))
    _close(r[...], np.arange(3.0, dtype=np.float32) + 2)


def test_lower_and_abstract_evaluation_consume_nothing():
    @bt.jit
    def f(x_ref):
        x_ref[...] += 1.0
        return x_ref[...].sum()

    r = bt.new_ref(bnp.arange(3.0))
    assert f.lower(r).compile() is not None
    out = bt.eval_shape(f, r)
    assert out.shape == () and out.dtype == np.float32
    assert "f32[3]" in str(bt.make_jaxpr(f)(r))
    _close(r[...], np.arange(3.0, dtype=np.float32))
    _close(f(r), np.float32(6.0))
    _close(r[...], np.arange(3.0, dtype=np.float32) + 1)


def test_eager_cond_over_a_ref_in_donation_error_mode():
    # The cond result cannot be written over the Ref's buffer: in "error"
    # mode eager control flow runs with the buffer undonated instead.
    r = bt.new_ref(bnp.zeros(3))
    bt.config.update("donation", "error")
    bt.lax.cond(True, lambda: r.__setitem__(0, 1.0), lambda: None)
    bt.lax.cond(False, lambda: None, lambda: r.__setitem__(1, 2.0))
    _close(r[...], np.array([1.0, 2.0, 0.0], np.float32))


def test_refs_are_not_copied():
    import copy

    r = bt.new_ref(bnp.zeros(3))
    for c in (copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="not copied"):
            c(r)


def test_closed_over_and_argument_refs_returned_values():
    def prog(L):
        api, np_ = L.api, L.np
        cl = api.new_ref(np_.zeros(2))

        @api.jit
        def f(a_ref, x):
            cl[...] += x
            a_ref[...] = cl[...] * 2
            return cl[...], a_ref[...]

        a = api.new_ref(np_.zeros(2))
        outs = [f(a, np_.ones(2)) for _ in range(3)]
        cl[0] = 100.0
        a[1] = -1.0
        return outs, cl[...], a[...]

    _both(prog)


def test_nested_jit_reverse_scan_and_cond_with_operands():
    def prog(L):
        api, np_ = L.api, L.np

        @api.jit
        def inner(r, x):
            r[...] += x
            return r[0]

        @api.jit
        def outer(r, x):
            a = inner(r, x)  # inlined: updates the outer function's Ref
            loc = api.new_ref(np_.zeros(2))
            b = inner(loc, x * 2)

            def body(c, xi):
                r[1] += xi
                return c + r[1], None

            c, _ = api.lax.scan(body, 0.0, np_.arange(3.0), reverse=True)
            d = api.lax.cond(
                x[0] > 0, lambda v: (r.__setitem__(0, v[0]), v * 2)[1], lambda v: v, x
            )
            return a, b, api.freeze(loc), c, d

        r = api.new_ref(np_.ones(2))
        return outer(r, np_.ones(2)), r[...]

    _both(prog)


def test_a_ref_dropped_after_lower_releases_its_buffer():
    f = bt.jit(lambda r: r.__setitem__(..., r[...] + 1))
    base = _stats()["bytes_in_use"]
    r = bt.new_ref(bnp.zeros(N))
    f.lower(r)  # donates nothing for good: no call runs
    assert _stats()["bytes_in_use"] - base >= N * 4
    del r
    assert _stats()["bytes_in_use"] - base < N * 4 // 4
