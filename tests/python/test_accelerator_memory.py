"""The memory contract on an accelerator's own memory, which the host cannot
address: the simulated platform (``BATON_PLATFORMS=sim,cpu``, run by
test_platforms.py) and CUDA (``BATON_PLATFORMS=cuda,cpu``, run by
tools/gpu_check.sh on a GPU). Skipped when the default platform is the CPU.

On such a device, ``device`` memory is reached only through copies:
``np.asarray`` returns a copy the numpy array owns (nothing cached, nothing
held), ``memoryview`` and host views refuse, and the host kinds still give
zero-copy views. Statistics and in-place overwrites behave as on the CPU.
"""

import numpy as np
import pytest

import baton as bt

pytestmark = pytest.mark.skipif(
    bt.default_backend() == "cpu", reason="needs an accelerator platform as the default"
)


def in_use(device=None, kind="device"):
    return bt.memory_stats(device or bt.devices()[0], kind)["bytes_in_use"]


def test_device_memory_is_not_host_addressable():
    d = bt.devices()[0]
    assert d.platform in ("sim", "cuda")
    assert not d._host_addressable("device")
    assert d._host_addressable("pinned_host") and d._host_addressable("unpinned_host")


def test_device_put_counts_exactly_and_round_trips():
    before = in_use()
    v = np.arange(1 << 16, dtype=np.float32) * 0.5
    x = bt.device_put(v)
    assert x.device is bt.devices()[0] and x.memory_kind == "device"
    assert in_use() - before == v.nbytes
    np.testing.assert_array_equal(np.asarray(x), v)
    del x
    assert in_use() == before  # R1: released when the last handle goes


def test_asarray_is_an_owned_copy_that_holds_nothing():
    x = bt.device_put(np.arange(1024, dtype=np.float32))
    a = np.asarray(x)
    b = np.asarray(x)
    assert a is not b and not np.shares_memory(a, b)  # nothing cached on x
    a[0] = 42.0  # the copy is the numpy array's own
    assert float(np.asarray(x)[0]) == 0.0
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(x, copy=False)
    # No hold: x can be overwritten in place while `a` lives.
    before = in_use()
    y = bt.device_put(np.ones(1024, np.float32), into=x)
    assert x.is_deleted() and in_use() == before
    np.testing.assert_array_equal(np.asarray(y), np.ones(1024, np.float32))
    assert a[1] == 1.0


def test_buffer_protocol_and_host_views_refuse_device_memory():
    x = bt.device_put(np.zeros(16, np.float32))
    with pytest.raises(BufferError, match="cannot be addressed by the host"):
        memoryview(x)
    with pytest.raises(Exception, match="cannot be addressed|host view"):
        with x.host_view():
            pass
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), np.zeros(16, np.float32))


def test_pinned_host_views_are_zero_copy_and_writable():
    before = in_use(kind="pinned_host")
    p = bt.device_put(np.zeros(256, np.float32), memory_kind="pinned_host")
    assert in_use(kind="pinned_host") - before == 1024
    with p.host_view(writable=True) as a:
        a[:] = np.arange(256, dtype=np.float32)
    v = np.asarray(p)
    assert not v.flags.writeable  # a view, not a copy
    np.testing.assert_array_equal(v, np.arange(256, dtype=np.float32))
    del v
    d = bt.device_put(p, memory_kind="device")
    np.testing.assert_array_equal(np.asarray(d), np.arange(256, dtype=np.float32))


def test_may_alias_copies_into_device_memory():
    v = np.arange(64, dtype=np.float32)
    before = in_use()
    x = bt.device_put(v, may_alias=True)  # cannot alias: copied, and counted
    assert in_use() - before == 256
    v[0] = -1.0
    assert float(np.asarray(x)[0]) == 0.0


def test_memory_kinds_move_and_keep_values():
    v = np.linspace(0, 1, 4096, dtype=np.float32)
    x = bt.device_put(v)
    for kind in ("pinned_host", "unpinned_host", "device"):
        x = bt.device_put(x, memory_kind=kind)
        assert x.memory_kind == kind
        np.testing.assert_array_equal(np.asarray(x), v)


def test_dlpack_gives_a_host_copy_where_it_must():
    x = bt.device_put(np.arange(8, dtype=np.int32))
    if bt.default_backend() == "sim":
        np.testing.assert_array_equal(np.from_dlpack(x), np.arange(8, dtype=np.int32))


def test_from_dlpack_of_a_strided_array_lands_in_device_memory():
    v = np.arange(64, dtype=np.float32).reshape(8, 8)[:, ::2]
    x = bt.from_dlpack(v)
    assert x.device is bt.devices()[0]
    np.testing.assert_array_equal(np.asarray(x), v)


def test_computations_run_on_the_device():
    d = bt.devices()[0]
    x = bt.device_put(np.ones(1 << 14, np.float32))
    x.block_until_ready()
    # The GPU executable's kernels: launched on CUDA, run as host code on
    # the simulated device.
    before = in_use()
    y = bt.jit(lambda a: a * 2 + 1)(x)
    y.block_until_ready()
    assert y.device is d
    assert in_use() - before == x.nbytes  # the output, on the device
    np.testing.assert_array_equal(np.asarray(y), np.full(1 << 14, 3, np.float32))
    # Donated: the result takes the argument's storage.
    z = bt.jit(lambda a: a - 1, donate_argnums=0)(y)
    z.block_until_ready()
    assert y.is_deleted()
    assert in_use() - before == x.nbytes
    np.testing.assert_array_equal(np.asarray(z), np.full(1 << 14, 2, np.float32))


def test_loops_update_their_carries_in_place_on_the_device():
    # while/scan/fori_loop run as the device's own work: each iteration's
    # kernels over the carries' buffers, in device memory the host cannot
    # address. A donated carry stays in the argument's storage for every
    # iteration: require_in_place accepts the loop, the result is the
    # argument's buffer, and nothing else stays allocated.
    n = 1 << 16

    def f(x):
        return bt.lax.fori_loop(0, 5, lambda i, v: v * 2.0 + 1.0, x)

    x = bt.device_put(np.ones(n, np.float32))
    x.block_until_ready()
    ptr = x.unsafe_buffer_pointer()
    before = in_use()
    y = bt.jit(f, donate_argnums=0, require_in_place=True)(x)
    y.block_until_ready()
    assert x.is_deleted()
    assert y.device is bt.devices()[0]
    assert y.unsafe_buffer_pointer() == ptr
    assert in_use() == before
    np.testing.assert_array_equal(np.asarray(y), np.full(n, 63, np.float32))

    # scan: the stacked output is written slice by slice into its buffer.
    def g(c, xs):
        return bt.lax.scan(lambda c, x: (c + x, c * x), c, xs)

    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    c, ys = bt.jit(g, donate_argnums=0, require_in_place=True)(
        bt.device_put(np.ones(3, np.float32)), bt.device_put(xs)
    )
    want_c, want_ys = np.ones(3, np.float32), []
    for row in xs:
        want_ys.append(want_c * row)
        want_c = want_c + row
    np.testing.assert_array_equal(np.asarray(c), want_c)
    np.testing.assert_array_equal(np.asarray(ys), np.stack(want_ys))
