"""JAX's default dtypes: 64-bit types off unless bt.config enables them.

Every test here sets the mode it tests. With x64 off (the default, as in
JAX), float64 / int64 / uint64 numpy data becomes
float32 / int32 / uint32 wherever it enters baton -- device_put, operands of
ops, jit arguments, constants captured by a trace -- and the memory counted
is the 32-bit size; a requested 64-bit dtype gives the 32-bit type with a
UserWarning. With ``bt.config.update("enable_x64", True)`` 64-bit stays
64-bit. (tests/python/conftest.py restores bt.config after each test.)
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp


@pytest.fixture(autouse=True)
def x64_off():
    bt.config.update("enable_x64", False)
    yield
    bt.config.update("enable_x64", True)


@pytest.fixture
def x64(x64_off):
    bt.config.update("enable_x64", True)
    yield
    bt.config.update("enable_x64", False)


def _in_use():
    return bt.memory_stats()["bytes_in_use"]


def test_the_default_is_off_as_in_jax():
    code = "import baton as bt; print(bt.config.enable_x64, bt.config.jax_enable_x64)"
    env = {k: v for k, v in os.environ.items() if k != "BATON_ENABLE_X64"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


def test_device_put_of_float64_is_float32_and_counts_16_bytes():
    base = _in_use()
    x = bt.device_put(np.ones(4))
    assert x.dtype == np.float32 and x.nbytes == 16
    # bytes_in_use rounds each buffer up to the allocator's 256 bytes.
    assert _in_use() - base == 256
    np.testing.assert_array_equal(np.asarray(x), np.ones(4, np.float32))
    x.delete()
    assert _in_use() == base
    # Where rounding does not hide it: 1 Mi float64 values hold 4 MiB.
    y = bt.device_put(np.ones(2**20))
    assert _in_use() - base == 4 * 2**20
    y.delete()


def test_with_x64_float64_stays_float64_and_counts_32_bytes(x64):
    base = _in_use()
    # Each copy in is waited for before its array is deleted: on an
    # accelerator device_put returns with the copy in flight, and the
    # storage returns when that work ends (R1).
    x = bt.device_put(np.ones(4)).block_until_ready()
    assert x.dtype == np.float64 and x.nbytes == 32
    x.delete()
    y = bt.device_put(np.ones(2**20)).block_until_ready()
    assert _in_use() - base == 8 * 2**20
    y.delete()
    assert _in_use() == base


@pytest.mark.parametrize(
    "src,want",
    [(np.float64, np.float32), (np.int64, np.int32), (np.uint64, np.uint32)],
)
def test_every_64_bit_dtype_narrows(src, want):
    x = bt.device_put(np.arange(5).astype(src))
    assert x.dtype == want
    np.testing.assert_array_equal(np.asarray(x), np.arange(5).astype(want))


def test_uint64_without_x64_is_refused_with_x64(x64):
    with pytest.raises(TypeError, match="uint64"):
        bt.device_put(np.arange(3, dtype=np.uint64))


def test_operands_jit_arguments_and_captured_constants_narrow():
    a64 = np.linspace(0, 1, 6)  # float64
    x = bt.device_put(np.ones(6, np.float32))
    assert (x + a64).dtype == np.float32  # an operand
    assert bnp.asarray(a64).dtype == np.float32
    assert bnp.arange(3).dtype == np.int32

    @bt.jit
    def f(v):
        return v * 2 + a64  # a64: a constant the trace captures

    out = f(a64)  # a jit argument
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), (a64 * 3).astype(np.float32))
    spec = f.lower(a64).compile()
    assert spec is not None
    assert f(np.arange(6)).dtype == np.float32  # int64 argument -> int32, + f32


def test_with_x64_operands_and_jit_keep_64_bits(x64):
    a64 = np.linspace(0, 1, 6)
    assert bnp.asarray(a64).dtype == np.float64

    @bt.jit
    def f(v):
        return v * 2 + a64

    assert f(a64).dtype == np.float64
    assert f(np.arange(6)).dtype == np.float64


def test_requested_64_bit_dtypes_warn_and_give_32_bits():
    with pytest.warns(UserWarning, match="float64 is not available.*enable_x64"):
        z = bnp.zeros(3, dtype=np.float64)
    assert z.dtype == np.float32
    with pytest.warns(UserWarning, match="int64"):
        assert bnp.ones(2, dtype="int64").dtype == np.int32
    with pytest.warns(UserWarning):
        assert bnp.asarray([1.0, 2.0], dtype=np.float64).dtype == np.float32


def test_astype_float64_is_float32_without_x64():
    x = bt.device_put(np.ones(3, np.float32))
    with pytest.warns(UserWarning, match="float64"):
        assert x.astype(np.float64).dtype == np.float32


def test_lax_keeps_64_bit_types_for_baton_s_own_arithmetic():
    # A deliberate difference from JAX: baton's IR has int64 and float64
    # whatever the switch, and its own functions (randint's bounds, exact
    # integer division) compute in them; the switch governs data entering
    # baton and baton.numpy's dtype= arguments.
    x = bt.device_put(np.ones(3, np.float32))
    conv = bt.jit(lambda v: bt.lax.convert_element_type(v, np.float64))
    assert conv(x).dtype == np.float64


def test_requested_64_bit_dtypes_are_kept_with_x64(x64):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bnp.zeros(3, dtype=np.float64).dtype == np.float64
        x = bt.device_put(np.ones(3, np.float32))
        assert x.astype(np.float64).dtype == np.float64


def test_switching_is_checked_and_takes_jax_spelling():
    with pytest.raises(ValueError, match="enable_x64"):
        bt.config.update("enable_x64", "yes")
    bt.config.update("jax_enable_x64", True)
    try:
        assert bt.config.enable_x64 is True
        assert bt.device_put(np.ones(2)).dtype == np.float64
    finally:
        bt.config.update("jax_enable_x64", False)
    assert bt.device_put(np.ones(2)).dtype == np.float32


def test_a_jitted_function_retraces_when_the_setting_changes():
    @bt.jit
    def f(v):
        return v + 1

    assert f(np.ones(2)).dtype == np.float32
    bt.config.update("enable_x64", True)
    try:
        assert f(np.ones(2)).dtype == np.float64
    finally:
        bt.config.update("enable_x64", False)
    assert f(np.ones(2)).dtype == np.float32


def test_the_setting_is_part_of_the_jit_cache_key():
    # Same argument signature (a float32 Array); the captured float64
    # constant's dtype depends on the setting, so the program is retraced.
    c = np.full(2, 0.5)
    traces = []

    @bt.jit
    def f(v):
        traces.append(1)
        return v + c

    x = bt.device_put(np.ones(2, np.float32))
    assert f(x).dtype == np.float32
    bt.config.update("enable_x64", True)
    try:
        assert f(x).dtype == np.float64
    finally:
        bt.config.update("enable_x64", False)
    assert f(x).dtype == np.float32
    assert len(traces) == 2


@pytest.mark.parametrize(
    "value,want", [("0", ["False", "float32"]), ("1", ["True", "float64"])]
)
def test_the_environment_variable_sets_the_default(value, want):
    code = (
        "import numpy as np, baton as bt; "
        "print(bt.config.enable_x64, bt.device_put(np.ones(2)).dtype)"
    )
    env = dict(os.environ, BATON_ENABLE_X64=value)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == want


def test_baton_s_own_integer_arithmetic_stays_exact_with_x64_off():
    # floor_divide and mod compute through float64 internally; the switch
    # must not narrow what baton computes for itself.
    a = np.array([2**31 - 1, -(2**31) + 3, 123456789, -7], np.int32)
    b = np.array([3, 7, -10, 2], np.int32)
    np.testing.assert_array_equal(np.asarray(bnp.floor_divide(a, b)), a // b)
    np.testing.assert_array_equal(np.asarray(bnp.mod(a, b)), np.mod(a, b))
    k = bt.random.PRNGKey(0)
    draws = np.asarray(bt.random.randint(k, (1000,), -(2**31), 2**31 - 1))
    assert draws.dtype == np.int32 and draws.min() < -(2**30) < 2**30 < draws.max()
