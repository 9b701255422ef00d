"""Donation through bt.jit (DESIGN R4 and section 3): at definition
(donate_argnums / donate_argnames), at the call site (bt.donate markers),
refusals that consume nothing, unusable donations."""

import warnings

import numpy as np
import pytest

import baton as bt

from _util import data_ptr, floats, in_use

N = 1 << 16  # 256 KiB of float32


def arr(n=N, start=0.0, **kw):
    return bt.device_put(floats(n, start), **kw)


def step(x):
    return x * 2 + 1


def test_donate_argnums_reuses_the_storage(no_gc):
    f = bt.jit(step, donate_argnums=0)
    x = arr()
    f.lower(x).compile()  # the program's constants (2 and 1) live from here
    ptr, before = data_ptr(x), in_use()
    y = f(x).block_until_ready()
    assert x.is_deleted()
    assert in_use() == before  # no second buffer
    assert data_ptr(y) == ptr  # the same storage
    np.testing.assert_array_equal(np.asarray(y), floats(N) * 2 + 1)
    with pytest.raises(bt.DeletedArrayError, match="donated to step"):
        np.asarray(x)
    ma = f.lower(y).compile().memory_analysis()
    assert ma.alias_size_in_bytes == 4 * N


def test_donate_argnums_covers_keyword_and_argnames_cover_position(no_gc):
    f = bt.jit(step, donate_argnums=0)
    x = arr()
    ptr = data_ptr(x)
    y = f(x=x)
    assert x.is_deleted() and data_ptr(y) == ptr
    g = bt.jit(step, donate_argnames="x")
    z = g(y)
    assert y.is_deleted() and data_ptr(z) == ptr
    h = bt.jit(lambda a, *, b: a + b, donate_argnames="b")
    w = arr()
    out = h(arr(), b=w)
    assert w.is_deleted() and out.shape == (N,)


def test_donating_a_pytree_donates_every_leaf(no_gc):
    @bt.jit
    def update(state):
        return {"a": state["a"] + 1, "b": [state["b"][0] * 2]}

    f = bt.jit(update.__wrapped__, donate_argnums=0)
    a, b = arr(), arr(start=1)
    pa, pb = data_ptr(a), data_ptr(b)
    f.lower({"a": a, "b": [b]}).compile()
    before = in_use()
    out = f({"a": a, "b": [b]})
    assert a.is_deleted() and b.is_deleted()
    assert in_use() == before
    assert {data_ptr(out["a"]), data_ptr(out["b"][0])} == {pa, pb}


def test_call_site_markers_anywhere_in_the_arguments(no_gc):
    f = bt.jit(lambda d, k: {"a": d["a"] * k, "b": d["b"] + 1})
    a, b = arr(), arr(start=3)
    pa = data_ptr(a)
    d = bt.donate(a)
    f.lower({"a": d, "b": b}, 2.0).compile()  # the marker stays unused
    before = in_use()
    out = f({"a": d, "b": b}, 2.0)
    out["a"].block_until_ready()
    assert a.is_deleted() and not b.is_deleted()
    assert data_ptr(out["a"]) == pa
    assert in_use() == before + 4 * N  # only "b"'s output is new
    with pytest.raises(bt.DeletedArrayError, match="donated to"):
        a.block_until_ready()
    # The whole argument donated at the call site: every leaf.
    c = bt.donate({"a": out["a"], "b": out["b"]})
    out2 = f(c, 1.0)
    assert out["a"].is_deleted() and out["b"].is_deleted()
    np.testing.assert_array_equal(np.asarray(out2["a"]), floats(N) * 2)


def test_same_array_donated_twice_is_refused_and_nothing_consumed():
    f = bt.jit(lambda x, y: x + y, donate_argnums=(0, 1))
    x = arr()
    with pytest.raises(bt.DonationError, match=r"donated twice.*Nothing was consumed"):
        f(x, x)
    assert not x.is_deleted()
    g = bt.jit(lambda x, y: x + y, donate_argnums=0)
    with pytest.raises(
        bt.DonationError, match="donated and also passed undonated as y"
    ):
        g(x, x)
    assert not x.is_deleted()
    # x passed again after bt.donate(x): a use of a consumed array.
    with pytest.raises(bt.DeletedArrayError, match=r"argument t\[1\].*donated"):
        bt.jit(lambda a, t: a + t[1])(bt.donate(x), (1.0, x))
    assert not x.is_deleted()  # refused: the marker gave its storage back
    np.testing.assert_array_equal(np.asarray(x), floats(N))


def test_donating_a_captured_array_is_refused():
    x = arr()
    f = bt.jit(lambda a: a + x, donate_argnums=0)
    with pytest.raises(bt.DonationError, match="captured"):
        f(x)
    assert not x.is_deleted()


@pytest.mark.parametrize(
    "kind",
    [
        # np.asarray is a live view of `device` memory only where the host
        # addresses it (the CPU); of `pinned_host` memory on every platform.
        pytest.param("device", marks=pytest.mark.host_addressable_device),
        "pinned_host",
    ],
)
def test_live_host_view_refuses_donation_and_consumes_nothing(kind, no_gc):
    f = bt.jit(lambda x, y: (x + 1, y + 1), donate_argnums=(0, 1))
    x, y = arr(), arr(memory_kind=kind)
    view = np.asarray(y)
    with pytest.raises(bt.DonationError, match=r"cannot donate argument y.*view"):
        f(x, y)
    assert not x.is_deleted() and not y.is_deleted()  # x was given back
    np.testing.assert_array_equal(np.asarray(x), floats(N))
    del view
    with warnings.catch_warnings():
        # y's pinned_host buffer: no output (in `device` memory) can reuse it.
        warnings.simplefilter("ignore", bt.DonationWarning)
        f(x, y)
    assert x.is_deleted() and y.is_deleted()


def test_deleted_and_consumed_arguments():
    f = bt.jit(step, donate_argnums=0)
    g = bt.jit(step)
    x = arr()
    x.delete()
    with pytest.raises(bt.DeletedArrayError, match=r"argument x.*deleted"):
        g(x)
    with pytest.raises(bt.DonationError, match="deleted"):  # also a DonationError
        f(x)
    y = arr()
    d = bt.donate(y)
    with pytest.raises(bt.DeletedArrayError, match="donated"):
        g(y)  # passing y after bt.donate(y)
    with pytest.raises(bt.DeletedArrayError):
        bt.jit(lambda a, b: a + b)(d, y)
    assert not y.is_deleted()  # refused: the marker gave y back
    f(bt.donate(y))
    with pytest.raises(ValueError, match="already used"):
        f(d)  # a marker passes to one call only


def test_unusable_donation_warns_naming_path_shape_dtype(no_gc):
    f = bt.jit(lambda s: s["a"] + 1, donate_argnums=0)
    a = arr()
    b = bt.device_put(np.ones((64, 64), np.int32))
    f.lower({"a": a, "b": b}).compile()
    before = in_use()
    with pytest.warns(bt.DonationWarning) as rec:
        out = f({"a": a, "b": b})
    msg = str(rec[0].message)
    assert "s['b'] (int32(64, 64))" in msg and "s['a']" not in msg
    assert rec[0].filename == __file__  # points at the call
    out.block_until_ready()
    assert a.is_deleted() and b.is_deleted()  # consumed anyway
    assert in_use() == before - b.nbytes  # b freed once the call is done


def test_unusable_donation_in_error_mode_consumes_nothing():
    bt.config.update("donation", "error")
    f = bt.jit(lambda x: bt.lax.sum(x), donate_argnums=0)
    x = arr()
    with pytest.raises(
        bt.DonationError, match=r"x \(float32\(65536,\)\).*Nothing was consumed"
    ):
        f(x)
    assert not x.is_deleted()
    with pytest.raises(bt.DonationError):
        bt.jit(lambda x: bt.lax.sum(x))(bt.donate(x))
    assert not x.is_deleted()  # the marker gave x back
    bt.config.update("donation", "warn")
    with pytest.warns(bt.DonationWarning):
        f(x)
    assert x.is_deleted()


def test_warnings_as_errors_consume_nothing():
    f = bt.jit(lambda x: bt.lax.sum(x), donate_argnums=0)
    x = arr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", bt.DonationWarning)
        with pytest.raises(bt.DonationWarning):
            f(x)
    assert not x.is_deleted()


def test_donated_unused_argument_is_consumed_and_may_hold_an_output(no_gc):
    f = bt.jit(lambda x, y: y * 2, donate_argnums=0)
    x, y = arr(), arr(start=1)
    ptr = data_ptr(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bt.DonationWarning)  # usable: no warning
        out = f(x, y)
    assert x.is_deleted() and not y.is_deleted()
    assert data_ptr(out) == ptr
    np.testing.assert_array_equal(np.asarray(out), floats(N, 1) * 2)


def test_non_array_leaves_in_donated_positions_are_fine():
    f = bt.jit(lambda x, n: x * n, donate_argnums=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", bt.DonationWarning)
        out = f(floats(N), 3)  # fresh device copies: no warning for them
    np.testing.assert_array_equal(np.asarray(out), floats(N) * 3)


def test_completion_order_frees_donated_inputs_before_ready(no_gc):
    f = bt.jit(lambda x, y: bt.lax.sum(x) + bt.lax.sum(y), donate_argnums=(0, 1))
    x, y = arr(), arr()
    before = in_use()
    with pytest.warns(bt.DonationWarning):
        out = f(x, y)
    out.block_until_ready()
    assert in_use() <= before - 2 * 4 * N + 4096


def test_lower_never_consumes_and_keeps_markers_unused():
    f = bt.jit(step, donate_argnums=0)
    x = arr()
    f.lower(x).compile()
    assert not x.is_deleted()
    d = bt.donate(x)
    f.lower(d).compile()
    assert not d.used
    f(d)
    assert d.used
