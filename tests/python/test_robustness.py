"""Issue 14's regressions: bad input, races and same-thread deadlocks that
used to crash, hang or mislead. Each test failed before its fix."""

import threading
import warnings

import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp


def in_use(kind="device"):
    return bt.memory_stats(memory_kind=kind)["bytes_in_use"]


def run_with_deadline(fn, seconds=60):
    """Runs fn on its own thread; fails (instead of hanging the suite) if it
    does not finish. Returns fn's result or re-raises its exception."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            out["error"] = e

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn.__name__} hung (a deadlock)"
    if "error" in out:
        raise out["error"]
    return out.get("value")


# ---- shapes whose size does not fit in 64 bits ---------------------------

HUGE = [(2**62, 4), (3, 2**62), (2**63 - 1,), (0, 2**62, 2**62), (2**64,), (2, 2**64)]


@pytest.mark.parametrize("shape", HUGE, ids=str)
@pytest.mark.parametrize(
    "make",
    [
        lambda s: bt.zeros(s),
        lambda s: bt.full(s, 1.0),
        lambda s: bt.empty(s, np.float32),
        lambda s: bt.ones(s, np.int8),
        lambda s: bnp.zeros(s),
        lambda s: bnp.full(s, 2),
    ],
    ids=["zeros", "full", "empty", "ones", "bnp.zeros", "bnp.full"],
)
def test_oversized_shapes_raise_value_error_and_allocate_nothing(make, shape):
    before = in_use()
    with pytest.raises(ValueError, match="too large"):
        make(shape)
    assert in_use() == before


def test_negative_dimension_names_its_position():
    with pytest.raises(ValueError, match=r"negative dimension \(-1 at position 1\)"):
        bt.zeros((3, -1))


def test_oversized_results_of_ops_are_refused_eagerly_and_under_jit():
    x = bnp.ones((4,))
    with pytest.raises(ValueError, match="too large"):
        bnp.broadcast_to(x, (2**62, 4))
    with pytest.raises(ValueError, match="too large"):
        bt.jit(lambda a: bnp.broadcast_to(a, (2**62, 4)))(x)
    with pytest.raises(ValueError, match="too large"):
        bnp.zeros((0,)).reshape(2**62, 4, 0)
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        bt.jit(lambda a: bt.lax.broadcast_to(a, (2**64, 4)))(x)


def test_large_valid_shape_is_a_typed_out_of_memory_with_the_true_size():
    with pytest.raises(bt.ResourceExhaustedError, match=r"4096\.00 GiB"):
        bt.zeros((2**40,))


# ---- one donate() marker, many threads, a function not yet compiled -------


def test_one_marker_from_four_threads_exactly_one_call_wins(no_gc):
    before = in_use()
    for trial in range(5):
        x = bt.device_put(np.arange(1024, dtype=np.float32))
        m = bt.donate(x)
        f = bt.jit(lambda a: a * 2 + 1)  # fresh: every thread compiles
        barrier = threading.Barrier(4)
        results, errors = [], []

        def call():
            barrier.wait()
            try:
                results.append(f(m))
            except ValueError as e:
                errors.append(str(e))

        threads = [threading.Thread(target=call) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 1, (trial, errors)
        assert len(errors) == 3
        assert all("already used by a call" in e for e in errors), errors
        np.testing.assert_array_equal(
            np.asarray(results[0]), np.arange(1024, dtype=np.float32) * 2 + 1
        )
        assert m.used and x.is_deleted()
        del results, m, x, f  # f: its compiled program's constants
    assert in_use() == before


def test_marker_whose_call_failed_while_tracing_says_it_was_given_back():
    x = bt.device_put(np.arange(4, dtype=np.float32))
    m = bt.donate(x)

    def broken(a):
        raise RuntimeError("bug in the traced function")

    with pytest.raises(RuntimeError, match="bug in the traced function"):
        bt.jit(broken)(m)
    assert not x.is_deleted()  # nothing lost: x is live with its values
    np.testing.assert_array_equal(np.asarray(x), np.arange(4, dtype=np.float32))
    assert m.used
    assert "given back" in repr(m)
    with pytest.raises(ValueError, match="given back.*Donate that array again"):
        bt.jit(lambda a: a + 1)(m)
    y = bt.jit(lambda a: a + 1)(bt.donate(x))  # the advice works
    np.testing.assert_array_equal(np.asarray(y), np.arange(4, dtype=np.float32) + 1)


def test_same_marker_twice_in_one_call_is_refused_and_consumes_nothing():
    x = bt.device_put(np.ones(8, np.float32))
    m = bt.donate(x)
    with pytest.raises(ValueError, match="same bt.donate\\(\\) marker"):
        bt.jit(lambda a, b: a + b)(m, m)
    assert not x.is_deleted()


# ---- objects made without their constructor --------------------------------


@pytest.mark.parametrize(
    "cls",
    [bt.Array, bt.Donated, bt.Device, bt.lax.Tracer],
    ids=lambda c: c.__name__,
)
def test_classes_only_baton_creates_cannot_be_made_from_python(cls):
    with pytest.raises(TypeError, match="cannot be created directly"):
        cls.__new__(cls)
    with pytest.raises(TypeError):
        cls()


def test_bypassed_constructor_no_longer_reaches_jit_or_device_put():
    with pytest.raises(TypeError, match="bt.donate\\(x\\) returns one"):
        d = bt.Donated.__new__(bt.Donated)
        bt.jit(lambda a: a + 1)(d)
    with pytest.raises(TypeError, match="bt.device_put"):
        bt.device_put(bt.Array.__new__(bt.Array))


# ---- waiting on the thread that holds a writable view ----------------------


def _pinned():
    return bt.device_put(np.arange(8, dtype=np.float32), memory_kind="pinned_host")


@pytest.mark.parametrize(
    "wait",
    [
        lambda x: bt.device_get(x),
        lambda x: float(x.sum()),
        lambda x: bt.jit(lambda a: a * 2)(x).block_until_ready(),
        lambda x: (x + 1).block_until_ready(),
    ],
    ids=["device_get", "float(sum)", "jit+block_until_ready", "eager+block"],
)
def test_wait_inside_a_writable_view_of_the_same_thread_raises(wait):
    x = _pinned()

    def scenario():
        with x.host_view(writable=True) as a:
            a[0] = 100.0
            with pytest.raises(RuntimeError, match="would never end.*Release the view"):
                wait(x)
        # Released: the work that waited runs and sees the write.
        return bt.device_get(x)

    got = run_with_deadline(scenario)
    assert got[0] == 100.0


def test_another_thread_may_wait_for_the_view_to_be_released():
    x = _pinned()
    released = threading.Event()
    seen = {}

    def reader():
        seen["sum"] = float(x.sum())  # blocks until the writer's view is gone
        seen["released_first"] = released.is_set()

    with x.host_view(writable=True) as a:
        t = threading.Thread(target=reader)
        t.start()
        a[:] = 1.0
        t.join(0.2)
        assert t.is_alive()  # really waiting, not refused
        released.set()
    t.join(60)
    assert not t.is_alive()
    assert seen == {"sum": 8.0, "released_first": True}


# ---- misleading messages ----------------------------------------------------


def test_format_spec_on_a_consumed_scalar_raises_deleted_array_error():
    x = bt.device_put(np.float32(1.5))
    assert f"{x:.2f}" == "1.50"
    bt.jit(lambda a: a + 1)(bt.donate(x))
    with pytest.raises(bt.DeletedArrayError, match="donated"):
        f"{x:.2f}"
    assert "deleted" in f"{x}"  # no spec: the description, never an error


# The memory kinds np.asarray views (zero-copy): device memory only where the
# host can address it; pinned_host on every platform.
@pytest.mark.parametrize(
    "b_kind",
    [pytest.param("device", marks=pytest.mark.host_addressable_device), "pinned_host"],
)
def test_refused_donation_does_not_first_warn_about_frees(no_gc, b_kind):
    # `a` has no output to reuse (would warn "freed when the call is done"),
    # but `b` has a live view, so the whole donation is refused: no warning.
    f = bt.jit(lambda a, b: (a.sum(), b + 1), donate_argnums=(0, 1))
    a = bt.device_put(np.ones(64, np.float32))
    b = bt.device_put(np.ones(16, np.float32), memory_kind=b_kind)
    view = np.asarray(b)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with pytest.raises(bt.DonationError, match="live host"):
            f(a, b)
    assert [w for w in rec if issubclass(w.category, bt.DonationWarning)] == []
    assert not a.is_deleted() and not b.is_deleted()
    del view
    with pytest.warns(bt.DonationWarning, match="freed when the call is done"):
        f(a, b)
    assert a.is_deleted() and b.is_deleted()
