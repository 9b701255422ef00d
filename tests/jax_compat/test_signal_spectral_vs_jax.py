"""bt.scipy.signal's spectral estimators (stft, istft, csd, welch) against
jax.scipy.signal: values to float32 rounding, shapes and dtypes, over several
signals, windows, segment lengths, overlaps, FFT lengths, boundaries,
scalings, sides and axes; eagerly and under bt.jit; istft(stft(x)) round
trips; and the errors."""

import warnings

import jax.numpy as jnp
import jax.scipy.signal as jsig
import numpy as np
import pytest

import baton as bt
import baton.numpy as bnp
import baton.scipy.signal as bsig

TOL = dict(rtol=2e-4, atol=2e-5)


def _close(b, j, **tol):
    tol = tol or TOL
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, equal_nan=True, **tol)


def _same(b, j, **tol):
    assert len(b) == len(j)
    for u, v in zip(b, j):
        _close(u, v, **tol)


def _signal(shape, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    t = np.arange(shape[-1])
    tone = np.sin(0.3 * t) + 0.5 * np.cos(1.7 * t) + 0.01 * t
    return (tone + rng.standard_normal(shape)).astype(dtype)


# ---- stft ----


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((128,), dict(nperseg=32)),
        ((100,), dict(nperseg=16, noverlap=4)),
        ((3, 90), dict(nperseg=15, noverlap=10, nfft=32)),
        ((2, 64), dict(nperseg=20, window="hamming", boundary="even")),
        ((64,), dict(nperseg=9, window=("tukey", 0.25), boundary="odd", padded=False)),
        ((70,), dict(nperseg=12, boundary="constant", detrend="linear")),
        ((70,), dict(nperseg=12, boundary=None, padded=False, detrend="constant")),
        ((50,), dict(nperseg=8, return_onesided=False, fs=10.0)),
        ((80,), dict(nperseg=300)),  # clamped to the signal's length (warns)
        (
            (40,),
            dict(window=np.linspace(0.1, 1.0, 10).astype(np.float32), nperseg=None),
        ),
        ((60,), dict(nperseg=1, noverlap=0)),
    ],
)
def test_stft_matches_jax(shape, kw):
    x = _signal(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(bsig.stft(x, **kw), jsig.stft(jnp.asarray(x), **kw))


@pytest.mark.parametrize("axis", [0, 1, -2])
def test_stft_axes(axis):
    x = _signal((40, 3, 36), seed=1)
    x = np.moveaxis(x, -1, 1)  # (40, 36, 3)
    _same(
        bsig.stft(x, nperseg=8, axis=axis),
        jsig.stft(jnp.asarray(x), nperseg=8, axis=axis),
    )


def test_stft_integer_and_complex_inputs():
    xi = np.arange(48, dtype=np.int32) % 7
    _same(bsig.stft(xi, nperseg=8), jsig.stft(jnp.asarray(xi), nperseg=8))
    xc = (_signal((48,)) + 1j * _signal((48,), seed=3)).astype(np.complex64)
    _same(
        bsig.stft(xc, nperseg=8, return_onesided=False),
        jsig.stft(jnp.asarray(xc), nperseg=8, return_onesided=False),
    )
    with pytest.warns(UserWarning, match="complex"):
        out = bsig.stft(xc, nperseg=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(out, jsig.stft(jnp.asarray(xc), nperseg=8))


def test_stft_under_jit():
    x = _signal((2, 96), seed=4)
    f = bt.jit(lambda v: bsig.stft(v, nperseg=24, noverlap=16, nfft=32))
    g = lambda v: jsig.stft(v, nperseg=24, noverlap=16, nfft=32)  # noqa: E731
    _same(f(x), g(jnp.asarray(x)))
    _same(f(x + 1), g(jnp.asarray(x + 1)))


def test_stft_grad():
    x = _signal((64,), seed=5)

    def loss(m, sig):
        return lambda v: m.sum(m.abs(sig.stft(v, nperseg=16)[2]) ** 2)

    import jax

    gb = bt.grad(loss(bnp, bsig))(x)
    gj = jax.grad(loss(jnp, jsig))(jnp.asarray(x))
    _close(gb, gj, rtol=1e-3, atol=1e-5)


# ---- welch and csd ----


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((256,), dict()),
        ((200,), dict(nperseg=32)),
        ((3, 150), dict(nperseg=25, noverlap=5, nfft=64, fs=100.0)),
        ((150,), dict(nperseg=32, scaling="spectrum", window="blackman")),
        ((150,), dict(nperseg=32, detrend="linear", average="median")),
        ((151,), dict(nperseg=31, detrend=False, return_onesided=False)),
        ((2, 120), dict(nperseg=20, average="median", nfft=21)),
        ((40,), dict(nperseg=40)),  # one segment: no averaging
        ((90,), dict(nperseg=18, detrend=lambda d: d - d.mean(axis=-1, keepdims=True))),
    ],
)
def test_welch_matches_jax(shape, kw):
    x = _signal(shape, seed=6)
    _same(bsig.welch(x, **kw), jsig.welch(jnp.asarray(x), **kw))


@pytest.mark.parametrize("axis", [0, -1])
def test_welch_axes(axis):
    x = _signal((3, 64), seed=7)
    x = x.T if axis == 0 else x
    _same(
        bsig.welch(x, nperseg=16, axis=axis),
        jsig.welch(jnp.asarray(x), nperseg=16, axis=axis),
    )


@pytest.mark.parametrize(
    "xs,ys,kw",
    [
        ((200,), (200,), dict(nperseg=32)),
        ((2, 150), (2, 150), dict(nperseg=30, noverlap=20, average="median")),
        ((2, 128), (1, 128), dict(nperseg=16, scaling="spectrum")),  # broadcast
        ((100,), (80,), dict(nperseg=16)),  # the shorter is zero-padded
        ((128,), (128,), dict(nperseg=16, return_onesided=False, window="hamming")),
    ],
)
def test_csd_matches_jax(xs, ys, kw):
    x, y = _signal(xs, seed=8), _signal(ys, seed=9)
    _same(bsig.csd(x, y, **kw), jsig.csd(jnp.asarray(x), jnp.asarray(y), **kw))


def test_csd_none_is_welch():
    x = _signal((120,), seed=10)
    _same(bsig.csd(x, None, nperseg=24), jsig.csd(jnp.asarray(x), None, nperseg=24))
    _close(bsig.csd(x, None, nperseg=24)[1], bsig.welch(x, nperseg=24)[1])


def test_welch_and_csd_under_jit():
    x, y = _signal((2, 100), seed=11), _signal((2, 100), seed=12)
    fw = bt.jit(lambda v: bsig.welch(v, nperseg=20, average="median"))
    _same(fw(x), jsig.welch(jnp.asarray(x), nperseg=20, average="median"))
    fc = bt.jit(lambda a, b: bsig.csd(a, b, nperseg=20, nfft=32))
    _same(fc(x, y), jsig.csd(jnp.asarray(x), jnp.asarray(y), nperseg=20, nfft=32))


def test_welch_finds_the_tone():
    fs = 1000.0
    t = np.arange(4096) / fs
    x = (np.sin(2 * np.pi * 123.0 * t) + 0.1 * _signal((4096,), seed=13)).astype(
        np.float32
    )
    f, p = bsig.welch(x, fs=fs, nperseg=512)
    assert abs(float(np.asarray(f)[int(np.argmax(np.asarray(p)))]) - 123.0) < fs / 512


def test_empty_inputs():
    x = np.zeros((0,), np.float32)
    _same(bsig.welch(x), jsig.welch(jnp.asarray(x)))
    with pytest.warns(UserWarning, match="greater than input_length"):
        got = bsig.stft(x)  # nperseg=256 is clamped to the length, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(got, jsig.stft(jnp.asarray(x)))


# ---- istft ----


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((128,), dict(nperseg=32)),
        ((3, 100), dict(nperseg=16, noverlap=12)),
        ((96,), dict(nperseg=20, window="hamming")),
        ((2, 64), dict(nperseg=16, nfft=32)),
        ((64,), dict(nperseg=16, window=("tukey", 0.5), noverlap=12)),
    ],
)
def test_istft_matches_jax(shape, kw):
    x = _signal(shape, seed=14)
    z = np.asarray(jsig.stft(jnp.asarray(x), **kw)[2])
    ikw = {
        k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window")
    }
    _same(bsig.istft(z, **ikw), jsig.istft(jnp.asarray(z), **ikw))


def test_istft_twosided_and_unbounded():
    x = _signal((80,), seed=15)
    z = np.asarray(jsig.stft(jnp.asarray(x), nperseg=16, return_onesided=False)[2])
    kw = dict(nperseg=16, input_onesided=False)
    _same(bsig.istft(z, **kw), jsig.istft(jnp.asarray(z), **kw))
    z = np.asarray(jsig.stft(jnp.asarray(x), nperseg=16, boundary=None)[2])
    kw = dict(nperseg=16, boundary=False)
    _same(bsig.istft(z, **kw), jsig.istft(jnp.asarray(z), **kw))


def test_istft_axes():
    x = _signal((4, 96), seed=16)
    z = np.asarray(jsig.stft(jnp.asarray(x), nperseg=16)[2])  # (4, freq, time)
    zt = np.transpose(z, (2, 0, 1))  # (time, 4, freq)
    kw = dict(nperseg=16, time_axis=0, freq_axis=-1)
    _same(bsig.istft(zt, **kw), jsig.istft(jnp.asarray(zt), **kw))
    zf = np.transpose(z, (1, 0, 2))  # (freq, 4, time)
    kw = dict(nperseg=16, time_axis=-1, freq_axis=0)
    _same(bsig.istft(zf, **kw), jsig.istft(jnp.asarray(zf), **kw))


@pytest.mark.parametrize(
    "kw",
    [
        dict(nperseg=32),
        dict(nperseg=16, noverlap=12, window="hamming"),
        dict(nperseg=20),
    ],
)
def test_istft_inverts_stft(kw):
    x = _signal((2, 160), seed=17)
    _, _, z = bsig.stft(x, **kw)
    ikw = {k: v for k, v in kw.items() if k != "boundary"}
    _, xr = bsig.istft(z, **ikw)
    _close(np.asarray(xr)[..., :160], x, rtol=1e-4, atol=1e-4)


def test_istft_under_jit():
    x = _signal((2, 64), seed=18)
    z = np.asarray(jsig.stft(jnp.asarray(x), nperseg=16)[2])
    f = bt.jit(lambda v: bsig.istft(v, nperseg=16))
    _same(f(z), jsig.istft(jnp.asarray(z), nperseg=16))
    rt = bt.jit(lambda v: bsig.istft(bsig.stft(v, nperseg=16)[2], nperseg=16)[1])
    _close(np.asarray(rt(x))[..., :64], x, rtol=1e-4, atol=1e-4)


# ---- errors ----


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda x: bsig.stft(x, nperseg=0), ValueError, "nperseg must be a positive"),
        (
            lambda x: bsig.stft(x, nperseg=8, noverlap=8),
            ValueError,
            "noverlap must be less",
        ),
        (lambda x: bsig.stft(x, nperseg=8, nfft=4), ValueError, "nfft must be greater"),
        (lambda x: bsig.stft(x, boundary="wrap"), ValueError, "Unknown boundary"),
        (lambda x: bsig.welch(x, scaling="power"), ValueError, "Unknown scaling"),
        (lambda x: bsig.welch(x, average="mode"), ValueError, "average must be"),
        (lambda x: bsig.welch(x, detrend=3), ValueError, "Unsupported detrend"),
        (
            lambda x: bsig.welch(x, window=np.ones((2, 4))),
            ValueError,
            "window must be 1-D",
        ),
        (
            lambda x: bsig.welch(x, window=np.ones(8), nperseg=4),
            ValueError,
            "different from length of window",
        ),
        (lambda x: bsig.welch(x, window=np.ones(100)), ValueError, "longer than input"),
        (
            lambda x: bsig.csd(x, np.ones((2, 64)), nperseg=8),
            ValueError,
            "same rank",
        ),
        (lambda x: bsig.istft(x), ValueError, "at least 2d"),
        (
            lambda x: bsig.istft(
                np.ones((9, 5), np.complex64), time_axis=0, freq_axis=0
            ),
            ValueError,
            "differing time and frequency",
        ),
        (
            lambda x: bsig.istft(
                np.ones((9, 5), np.complex64), nperseg=16, noverlap=16
            ),
            ValueError,
            "noverlap must be less",
        ),
        (
            lambda x: bsig.istft(np.ones((9, 5), np.complex64), window=np.ones(4)),
            ValueError,
            "window must have length of 16",
        ),
        (
            lambda x: bsig.istft(np.ones((9, 5), np.complex64), nfft=8),
            ValueError,
            "must be longer than nperseg",
        ),
    ],
)
def test_errors(call, exc, match):
    x = _signal((64,), seed=19)
    with pytest.raises(exc, match=match):
        call(x)


def test_errors_match_jax():
    x = jnp.asarray(_signal((64,), seed=19))
    for kw in (dict(nperseg=8, noverlap=8), dict(nperseg=8, nfft=4), dict(nperseg=0)):
        with pytest.raises(ValueError):
            jsig.stft(x, **kw)
        with pytest.raises(ValueError):
            bsig.stft(np.asarray(x), **kw)


def test_traced_nperseg_refused():
    x = _signal((64,), seed=20)
    with pytest.raises(TypeError, match="nperseg must be a static integer"):
        bt.jit(lambda v, n: bsig.stft(v, nperseg=n))(x, 8)


def test_vmap_and_traced_fs():
    x = _signal((3, 64), seed=21)
    got = bt.vmap(lambda v: bsig.welch(v, nperseg=16)[1])(x)
    _close(got, jsig.welch(jnp.asarray(x), nperseg=16)[1])
    # fs only scales values, so it may be traced.
    f = bt.jit(lambda v, fs: bsig.welch(v, fs=fs, nperseg=16))
    _same(f(x, 10.0), jsig.welch(jnp.asarray(x), fs=10.0, nperseg=16))
    g = bt.jit(lambda v, fs: bsig.stft(v, fs=fs, nperseg=16))
    _same(g(x, 4.0), jsig.stft(jnp.asarray(x), fs=4.0, nperseg=16))
