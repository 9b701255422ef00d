"""Seeds 001, 002 and 003 (see /seeds), written the way their authors would
write them on baton."""

import dataclasses
import functools

import numpy as np
import pytest

import baton as bt
from baton import lax

from _util import data_ptr

MiB = 1 << 20


def stats():
    return bt.memory_stats()


def peak_growth(fn):
    """Runs fn() and returns (result, peak bytes above what was in use)."""
    base = stats()["bytes_in_use"]
    bt.reset_peak_memory_stats()
    out = bt.block_until_ready(fn())
    return out, stats()["peak_bytes_in_use"] - base


# ---- Seed 001: in-place update of a dataclass field under jit ----


@bt.tree.register_dataclass
@dataclasses.dataclass(frozen=True)
class Field:
    u: object

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


def at_add(x, start, stop, value):
    # TODO(.at[]): this is x.at[start:stop].add(value) once Array/Tracer
    # indexing and .at[] exist; written with the lax ops .at[] is built on.
    update = lax.dynamic_slice(x, [start], [stop - start]) + value
    return lax.dynamic_update_slice(x, update, [start])


def update(field):
    # Seed 001: field.replace(u=field.u.at[:].add(1)).
    return field.replace(u=field.u + 1)


def test_seed_001_dataclass_field_updated_in_place_with_donation(no_gc):
    n = 16 * MiB  # 64 MiB of float32
    field = Field(bt.device_put(np.zeros(n, np.float32)))
    ptr = data_ptr(field.u)
    jupdate = bt.jit(update, donate_argnums=0)
    ma = jupdate.lower(field).compile().memory_analysis()
    assert ma.alias_size_in_bytes == 4 * n  # the new u is the old u's buffer
    assert ma.temp_size_in_bytes <= MiB

    new_field, grew = peak_growth(lambda: jupdate(field))
    assert grew <= MiB  # 1x memory: no second 64 MiB buffer
    assert isinstance(new_field, Field)
    assert field.u.is_deleted() and data_ptr(new_field.u) == ptr
    field = new_field
    for _ in range(3):
        field, grew = peak_growth(lambda f=field: jupdate(f))
        assert grew <= MiB
    assert data_ptr(field.u) == ptr
    assert float(np.asarray(field.u)[-1]) == 4.0


def test_seed_001_partial_at_update_in_place(no_gc):
    n = 16 * MiB
    u = bt.device_put(np.zeros(n, np.float32))
    ptr = data_ptr(u)
    f = bt.jit(
        lambda fld: fld.replace(u=at_add(fld.u, 1000, 3000, 1.0)), donate_argnums=0
    )
    ma = f.lower(Field(u)).compile().memory_analysis()
    assert ma.alias_size_in_bytes == 4 * n and ma.temp_size_in_bytes <= MiB
    out, grew = peak_growth(lambda: f(Field(u)))
    assert grew <= MiB and data_ptr(out.u) == ptr
    v = np.asarray(out.u)
    assert v[999] == 0 and v[1000] == 1 and v[2999] == 1 and v[3000] == 0


def test_seed_001_without_donation_the_old_field_is_unchanged(no_gc):
    n = 4 * MiB
    field = Field(bt.device_put(np.zeros(n, np.float32)))
    new_field, grew = peak_growth(lambda: bt.jit(update)(field))
    assert not field.u.is_deleted()
    assert float(np.asarray(field.u)[0]) == 0 and float(np.asarray(new_field.u)[0]) == 1
    assert grew >= 4 * n  # a second buffer: that is what donation avoids


# ---- Seed 002: donation at definition, at the call site, fixed points ----


def gradient_step(params, lr):
    return {k: v - lr * (v * 0.5) for k, v in params.items()}


def in_place_fixed_point_iteration(fun, n_iter, x):
    x = x.copy()  # Protect the input array
    for _ in range(n_iter):
        x = fun(bt.donate(x))
    return x


def test_seed_002_donate_at_definition(no_gc):
    params = {
        "w": bt.device_put(np.ones(MiB, np.float32)),
        "b": bt.device_put(np.ones(256, np.float32)),
    }
    step = bt.jit(gradient_step, donate_argnums=0, static_argnames="lr")
    step.lower(params, lr=0.1).compile()
    ptrs = {k: data_ptr(v) for k, v in params.items()}
    new, grew = peak_growth(lambda: step(params, lr=0.1))
    assert all(v.is_deleted() for v in params.values())
    assert {k: data_ptr(v) for k, v in new.items()} == ptrs
    assert grew <= 64 * 1024
    np.testing.assert_allclose(np.asarray(new["w"]), 0.95)


def test_seed_002_donate_at_the_call_site(no_gc):
    params = {"w": bt.device_put(np.ones(MiB, np.float32))}
    step = bt.jit(gradient_step, static_argnums=1)
    keep = params["w"]  # another reference: donate() consumes it anyway
    step.lower(params, 0.1).compile()
    ptr = data_ptr(keep)
    new, grew = peak_growth(lambda: step(bt.donate(params), 0.1))
    assert keep.is_deleted() and params["w"].is_deleted()
    assert data_ptr(new["w"]) == ptr and grew <= 64 * 1024
    with pytest.raises(bt.DeletedArrayError, match="donated to gradient_step"):
        np.asarray(keep)


def test_seed_002_fixed_point_iteration_at_1x_memory(no_gc):
    n = 2 * MiB  # 8 MiB state
    state = 4 * n
    fun = bt.jit(lambda x: x * 0.5 + 1.0)
    x = bt.device_put(np.zeros(n, np.float32))
    fun.lower(x).compile()
    out, grew = peak_growth(lambda: in_place_fixed_point_iteration(fun, 50, x))
    assert grew <= state + MiB  # the protective copy, then nothing more
    np.testing.assert_allclose(np.asarray(out)[:4], 2.0, rtol=1e-6)
    assert not x.is_deleted()

    def without_donation(fun, n_iter, x):
        x = x.copy()
        for _ in range(n_iter):
            x = fun(x)
        return x

    out, grew = peak_growth(lambda: without_donation(fun, 50, x))
    assert grew >= 2 * state  # 2x: the old state lives until the new one exists


def test_seed_002_fixed_point_iteration_inside_one_program(no_gc):
    # The whole iteration as one compiled loop: the carry stays in the
    # donated buffer for all 50 steps, checked at compile time.
    n = 2 * MiB  # 8 MiB state
    state = 4 * n

    @functools.partial(bt.jit, donate_argnums=0, require_in_place=True)
    def iterate(x):
        return lax.fori_loop(0, 50, lambda i, v: v * 0.5 + 1.0, x)

    x = bt.device_put(np.zeros(n, np.float32))
    compiled = iterate.lower(x).compile()
    m = compiled.memory_analysis()
    assert m.alias_size_in_bytes == state
    assert m.temp_size_in_bytes <= 64 * 1024
    ptr = data_ptr(x)
    out, grew = peak_growth(lambda: iterate(x))
    assert grew <= 64 * 1024  # no second copy of the state, ever
    assert data_ptr(out) == ptr  # the result is the donated buffer
    assert x.is_deleted()
    np.testing.assert_allclose(np.asarray(out)[:4], 2.0, rtol=1e-6)


def test_seed_002_undonated_loop_is_refused_by_require_in_place():
    @functools.partial(bt.jit, require_in_place=True)
    def iterate(x):
        return lax.fori_loop(0, 50, lambda i, v: v * 0.5 + 1.0, x)

    x = bt.device_put(np.zeros(16, np.float32))
    with pytest.raises(bt.InPlaceError, match=r"loop carry 1 of scan.*not donated"):
        iterate(x)
    assert not x.is_deleted()  # nothing consumed, nothing ran


# ---- Seed 003: numpy constants used many times; transfers keep order ----


def make_ws():
    rng = np.random.default_rng(428)
    return [bt.device_put(w) for w in rng.normal(size=(6, 4, 4)).astype(np.float32)]


@functools.partial(bt.jit, static_argnums=1)
def run_10x(ws, wrap_array):
    # Create some NumPy constant.
    x = np.arange(8).reshape((2, 4)).astype(np.float32)
    if wrap_array:
        x = bt.device_put(x)
    # Use the same constant repeatedly.
    ys = [lax.matmul(x, w) for w in ws]
    return sum(ys)


def count_constants(text, type_text):
    return sum(
        1 for line in text.splitlines() if "constant(" in line and type_text in line
    )


@pytest.mark.parametrize("wrap_array", [False, True])
def test_seed_003_constant_is_stored_once(wrap_array):
    ws = make_ws()
    compiled = run_10x.lower(ws, wrap_array).compile()
    assert count_constants(compiled.as_text(), ": f32[2,4]") == 1
    ma = compiled.memory_analysis()
    assert 32 <= ma.constant_size_in_bytes < 2 * 32  # the (2, 4) constant, once
    x = np.arange(8).reshape((2, 4)).astype(np.float32)
    want = sum(x @ np.asarray(w) for w in ws)
    np.testing.assert_allclose(np.asarray(run_10x(ws, wrap_array)), want, rtol=1e-5)


def test_seed_003_large_constant_used_160_times_is_stored_once(no_gc):
    big = np.ones((1024, 4096), np.float32)  # 16 MiB
    big[0, 0] = 2

    @bt.jit
    def layers(ws):
        return sum(big * w for w in ws)

    ws = [bt.device_put(np.float32(i)) for i in range(160)]
    bt.clear_caches()
    before = stats()["bytes_in_use"]
    compiled = layers.lower(ws).compile()
    ma = compiled.memory_analysis()
    assert big.nbytes <= ma.constant_size_in_bytes <= big.nbytes + 4096
    assert count_constants(compiled.as_text(), ": f32[1024,4096]") == 1
    # Stored (and transferred) once on the device.
    assert stats()["bytes_in_use"] - before <= big.nbytes + 64 * 1024
    del compiled, layers
    assert stats()["bytes_in_use"] == before


def test_seed_003_mutation_loop_keeps_program_order():
    x = np.zeros((100, 100), np.float32)
    y = []
    for i in range(10):
        x[:, :] = i
        y.append(bt.device_put(x))
    assert [float(np.asarray(yi).mean()) for yi in y] == [float(i) for i in range(10)]
    for i, yi in enumerate(y):
        assert (np.asarray(yi) == i).all()


def test_seed_003_mutating_a_captured_constant_keeps_program_order():
    x = np.zeros(16, np.float32)
    w = bt.device_put(np.ones(16, np.float32))

    @bt.jit
    def f(w):
        outs = []
        for i in range(4):
            x[:] = i  # mutated between uses while tracing
            outs.append(w * x)
        return outs

    got = [np.asarray(o) for o in f(w)]
    for i, g in enumerate(got):
        assert (g == i).all()
