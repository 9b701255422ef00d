"""The configuration states bt.legacy_prng_key and bt.thread_guard against
JAX's: which bt.random calls warn or raise for a raw uint32 key, with which
class and message; the thread guard's owner thread, the error for a
multi-process operation called from another thread, and for a guard set
from a second thread."""

import threading
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import baton as bt  # noqa: E402
from baton import _config_states  # noqa: E402

# (name, call on (random module, key)): each takes one key.
CALLS = [
    ("normal", lambda r, k: r.normal(k, (2,))),
    ("uniform", lambda r, k: r.uniform(k)),
    ("split", lambda r, k: r.split(k)),
    ("fold_in", lambda r, k: r.fold_in(k, 3)),
    ("bits", lambda r, k: r.bits(k)),
    ("randint", lambda r, k: r.randint(k, (2,), 0, 5)),
    ("permutation", lambda r, k: r.permutation(k, 4)),
    ("beta", lambda r, k: r.beta(k, 1.0, 2.0)),
    ("t", lambda r, k: r.t(k, 3.0)),
    ("key_data", lambda r, k: r.key_data(k)),
    ("key_impl", lambda r, k: r.key_impl(k)),
    ("wrap_key_data", lambda r, k: r.wrap_key_data(k)),
    ("clone", lambda r, k: r.clone(k)),
]


def _outcome(fn):
    """("ok" | "raise", exception class name, messages of the warnings)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn()
            kind, err = "ok", None
        except Exception as e:  # compared with JAX's
            kind, err = "raise", (type(e).__name__, str(e))
    return kind, err, sorted({(x.category.__name__, str(x.message)) for x in w})


@pytest.mark.parametrize("mode", ["allow", "warn", "error"])
@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_raw_key_per_mode_matches_jax(mode, name, call):
    jk, bk = jax.random.PRNGKey(1), bt.random.PRNGKey(1)
    with jax.legacy_prng_key(mode):
        j = _outcome(lambda: call(jax.random, jk))
    with bt.legacy_prng_key(mode):
        b = _outcome(lambda: call(bt.random, bk))
    assert b == j


@pytest.mark.parametrize("mode", ["warn", "error"])
@pytest.mark.parametrize("name,call", CALLS[:9], ids=[c[0] for c in CALLS[:9]])
def test_typed_key_never_warns(mode, name, call):
    # baton's functions pass raw key data to each other inside (beta splits
    # its key): only the caller's key is checked.
    with bt.legacy_prng_key(mode):
        b = _outcome(lambda: call(bt.random, bt.random.key(1)))
    with jax.legacy_prng_key(mode):
        j = _outcome(lambda: call(jax.random, jax.random.key(1)))
    assert b == j == ("ok", None, [])


def test_legacy_warning_points_at_the_caller():
    with bt.legacy_prng_key("warn"), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        bt.random.normal(bt.random.PRNGKey(0))
    assert [x.filename for x in w] == [__file__]


def test_legacy_under_jit_warns_when_tracing():
    f = bt.jit(lambda k: bt.random.normal(k))
    with bt.legacy_prng_key("error"):
        with pytest.raises(ValueError, match="Legacy uint32 key array"):
            f(bt.random.PRNGKey(0))


def test_legacy_prng_key_config():
    assert bt.legacy_prng_key.value == jax.legacy_prng_key.value == "allow"
    bt.config.update("jax_legacy_prng_key", "error")
    try:
        assert bt.legacy_prng_key.value == "error"
        with pytest.raises(ValueError):
            bt.random.split(bt.random.PRNGKey(0))
    finally:
        bt.config.update("jax_legacy_prng_key", "allow")
    with pytest.raises(ValueError):
        jax.config.update("jax_legacy_prng_key", "bogus")
    with pytest.raises(ValueError):
        bt.config.update("jax_legacy_prng_key", "bogus")
    # The values are the same as JAX's either way.
    with bt.legacy_prng_key("warn"), pytest.warns(UserWarning):
        b = bt.random.uniform(bt.random.PRNGKey(3), (3,))
    np.testing.assert_array_equal(b, jax.random.uniform(jax.random.PRNGKey(3), (3,)))


# ---- thread_guard ----


def _in_thread(fn, name="other-thread"):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as e:  # returned to the test
            out["error"] = e

    t = threading.Thread(target=run, name=name)
    t.start()
    t.join()
    return out


def test_thread_guard_value_and_config():
    assert bt.thread_guard.value is jax.thread_guard.value is False
    with bt.thread_guard(True):
        assert bt.thread_guard.value is True
    assert bt.thread_guard.value is False
    bt.config.update("jax_thread_guard", True)
    assert bt.thread_guard.value is True
    bt.config.update("jax_thread_guard", False)


def test_guard_set_from_a_second_thread_raises_as_jax():
    with jax.thread_guard(True):
        j = _in_thread(lambda: jax.thread_guard(True).__enter__())
    with bt.thread_guard(True):
        b = _in_thread(lambda: bt.thread_guard(True).__enter__())
    assert isinstance(j["error"], RuntimeError)
    assert isinstance(b["error"], RuntimeError)
    assert str(b["error"]) in str(j["error"])  # JAX prefixes FAILED_PRECONDITION


def test_check_thread_guard():
    check = _config_states.check_thread_guard
    assert _in_thread(lambda: check("op")) == {"value": None}  # guard off
    with bt.thread_guard(True):
        check("op")  # the guard's own thread
        out = _in_thread(lambda: check("an all-reduce"), name="worker-7")
        with _config_states.guard_checked():
            check("op")
    err = out["error"]
    assert isinstance(err, RuntimeError)
    assert "'worker-7'" in str(err) and "'MainThread'" in str(err)
    assert "an all-reduce" in str(err)
    assert _in_thread(lambda: check("op")) == {"value": None}  # guard reset


def test_thread_guard_on_a_distributed_collective():
    # A process group of one (nothing is connected): its collectives are
    # multi-process operations all the same.
    bt.distributed.initialize(num_processes=1, process_id=0)
    try:
        x = np.arange(3, dtype=np.float32)
        with bt.thread_guard(True):
            np.testing.assert_array_equal(bt.distributed._allgather(x), x[None])
            for op in (
                lambda: bt.distributed._allreduce(x),
                lambda: bt.distributed._allgather(x),
                lambda: bt.distributed._broadcast(x),
                bt.distributed._barrier,
            ):
                err = _in_thread(op, name="collective-thread")["error"]
                assert isinstance(err, RuntimeError)
                assert "'collective-thread'" in str(err)
        # Without the guard any thread may call them.
        got = _in_thread(lambda: bt.distributed._allreduce(x))
        np.testing.assert_array_equal(got["value"], x)
    finally:
        bt.distributed.shutdown()
