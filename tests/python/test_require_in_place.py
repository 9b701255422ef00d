"""bt.jit(fun, require_in_place=True) and bt.InPlaceError (DESIGN 5.2):
compiling fails exactly when an update -- .at[], dynamic_update_slice, a
loop carry -- would copy its operand (an undonated operand, or one read
after the update), naming the update and why; it passes otherwise, and then
the update really is in place (buffer identity, memory statistics)."""

import functools

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
from baton import lax

from _util import data_ptr

N = 1 << 16  # 256 KiB of float32


def fresh():
    return bt.device_put(np.zeros(N, np.float32))


def in_place(fn, **jit_options):
    return bt.jit(fn, require_in_place=True, **jit_options)


# ---- single updates ----


def set_one(x):
    return x.at[3].set(1.0)


def add_slice(x):
    return lax.dynamic_update_slice(x, x[:4] + 1.0, (8,))


def scatter_add(x):
    return x.at[bnp.array([1, 5, 9])].add(2.0)


UPDATES = [set_one, add_slice, scatter_add]


@pytest.mark.parametrize("update", UPDATES, ids=lambda f: f.__name__)
def test_undonated_update_is_refused_naming_the_argument(update):
    x = fresh()
    with pytest.raises(bt.InPlaceError, match=r"argument 0, which is not donated"):
        in_place(update)(x)
    assert not x.is_deleted()  # refused at compile time: nothing consumed
    assert issubclass(bt.InPlaceError, ValueError)


@pytest.mark.parametrize("update", UPDATES, ids=lambda f: f.__name__)
def test_donated_update_compiles_and_runs_in_place(update):
    x = fresh()
    ptr = data_ptr(x)
    want = np.asarray(bt.jit(update)(fresh()))
    y = in_place(update, donate_argnums=0)(x)
    assert data_ptr(y) == ptr  # written into the donated buffer
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), want)


def test_update_whose_old_value_is_read_afterwards_is_refused():
    def f(x):
        y = x.at[3].set(1.0)
        return y, (x + y).sum()  # the old x is needed after y exists

    with pytest.raises(bt.InPlaceError, match=r"read again after the update"):
        in_place(f, donate_argnums=0)(fresh())


def test_old_value_read_before_the_update_is_fine():
    # x.sum() does not depend on the update: it runs first, then the update
    # overwrites x.
    def f(x):
        y = x.at[3].set(1.0)
        return y, x.sum()

    x = fresh()
    ptr = data_ptr(x)
    y, s = in_place(f, donate_argnums=0)(x)
    assert data_ptr(y) == ptr
    assert float(s) == 0.0 and float(y[3]) == 1.0


def test_update_of_a_returned_operand_is_refused():
    def f(x):
        return x.at[0].set(5.0), x

    with pytest.raises(bt.InPlaceError, match=r"returned as an output as well"):
        in_place(f, donate_argnums=0)(fresh())


def test_message_lists_every_update_and_says_what_to_do():
    def f(x, y):
        return x.at[0].set(1.0), y.at[1].set(2.0)

    with pytest.raises(bt.InPlaceError) as e:
        in_place(f)(fresh(), fresh())
    msg = str(e.value)
    assert "2 updates need a copy" in msg
    assert "argument 0" in msg and "argument 1" in msg
    assert "donate_argnums" in msg


def test_without_the_option_the_copy_is_made_silently():
    x = fresh()
    y = bt.jit(set_one)(x)
    assert not x.is_deleted() and data_ptr(y) != data_ptr(x)
    assert float(x[3]) == 0.0 and float(y[3]) == 1.0


# ---- loop carries ----


def fori_at_add(x):
    return lax.fori_loop(0, 8, lambda i, v: v.at[i].add(1.0), x)


def scan_cumulative(x):
    c, ys = lax.scan(lambda c, t: (c * 0.5 + t, c.sum()), x, bnp.arange(4.0))
    return c, ys


def while_halving(x):
    return lax.while_loop(lambda v: v[0] > 1e-3, lambda v: v * 0.5, x + 1.0)


@pytest.mark.parametrize("loop", [fori_at_add, scan_cumulative], ids=lambda f: f.__name__)
def test_undonated_loop_carry_is_refused(loop):
    with pytest.raises(bt.InPlaceError, match=r"loop carry \d+ of scan.*not donated"):
        in_place(loop)(fresh())


@pytest.mark.parametrize(
    "loop", [fori_at_add, scan_cumulative, while_halving], ids=lambda f: f.__name__
)
def test_donated_loop_carry_stays_in_place(loop):
    x = fresh()
    compiled = in_place(loop, donate_argnums=0).lower(x).compile()
    m = compiled.memory_analysis()
    assert m.temp_size_in_bytes <= 4096  # no second carry anywhere
    want = bt.jit(loop)(fresh())
    got = in_place(loop, donate_argnums=0)(x)
    for a, b in zip(bt.tree.leaves(got), bt.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_loop_starting_from_a_temporary_needs_no_donation():
    # x + 1.0 is the loop's own temporary: it dies at the loop, which then
    # runs in its buffer.
    in_place(while_halving).lower(fresh()).compile()


def test_carry_whose_old_value_is_read_after_the_new_one_is_refused():
    # (a, b) -> (a + b, a * b): whichever runs first, the other still reads
    # its old operand; one new carry needs storage of its own each step.
    def f(a, b):
        return lax.fori_loop(0, 4, lambda i, c: (c[0] + c[1], c[0] * c[1]), (a, b))

    with pytest.raises(bt.InPlaceError, match=r"loop carry \d+ of scan.*storage of its own"):
        in_place(f, donate_argnums=(0, 1))(fresh(), fresh())
    # Without the option it runs, rotating one spare buffer.
    a, b = bt.jit(f, donate_argnums=(0, 1))(fresh() + 1.0, fresh() + 2.0)
    assert float(a[0]) > 0 and float(b[0]) > 0


def test_swapped_carries_rotate_without_copies():
    @functools.partial(in_place, donate_argnums=(0, 1))
    def swap(a, b):
        return lax.fori_loop(0, 3, lambda i, c: (c[1], c[0]), (a, b))

    a, b = swap(fresh(), fresh() + 1.0)
    assert float(a[0]) == 1.0 and float(b[0]) == 0.0  # 3 swaps: swapped


def test_constant_initial_carry_is_not_an_update():
    # A loop counter starting at 0 (a constant) is not reported.
    f = in_place(lambda x: lax.fori_loop(0, 3, lambda i, v: v + 1.0, x), donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(f(fresh()))[:2], [3.0, 3.0])
