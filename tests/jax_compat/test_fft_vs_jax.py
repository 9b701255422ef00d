"""FFTs against JAX: every function of baton.numpy.fft against
jax.numpy.fft (shapes, axes, n/s, norm, dtypes and promotion), eagerly and
under bt.jit; bt.lax.fft and its FftType forms; grad, jvp and vjp of
programs built on transforms (JAX's conventions for complex values); vmap;
baton.scipy.fft's DCTs; and spectral programs (a periodic heat equation
solved in Fourier space, a convolution through rfft/irfft) -- the same
values, shapes and dtypes as JAX on the same inputs."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bjnp  # noqa: E402

RNG = np.random.default_rng(41)
R1 = RNG.normal(size=(10,)).astype(np.float32)
R2 = RNG.normal(size=(3, 7)).astype(np.float32)
R3 = RNG.normal(size=(2, 4, 6)).astype(np.float32)
R4 = RNG.normal(size=(2, 3, 2, 5)).astype(np.float32)
C2 = (RNG.normal(size=(4, 6)) + 1j * RNG.normal(size=(4, 6))).astype(np.complex64)
C3 = (RNG.normal(size=(3, 5, 4)) + 1j * RNG.normal(size=(3, 5, 4))).astype(np.complex64)
I2 = RNG.integers(-5, 5, size=(4, 8)).astype(np.int32)


def _close(b, j, rtol=2e-5, atol=2e-5):
    b, j = np.asarray(b), np.asarray(j)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    assert b.shape == j.shape, (b.shape, j.shape)
    scale = max(1.0, float(np.max(np.abs(j)))) if j.size else 1.0
    np.testing.assert_allclose(b, j, rtol=rtol, atol=atol * scale)


def _both(fn, *args, **tol):
    want = fn(jjnp)(*args)
    _close(fn(bjnp)(*args), want, **tol)
    _close(bt.jit(fn(bjnp))(*args), want, **tol)


# ---- the complex transforms ----

CASES_1D = [
    (C2, {}),
    (C2, {"n": 4}),
    (C2, {"n": 9}),
    (C2, {"axis": 0}),
    (C3, {"axis": 1, "n": 7}),
    (R1, {}),
    (I2, {"axis": 0}),
    (C2, {"norm": "ortho"}),
    (C2, {"norm": "forward"}),
    (C2, {"norm": "backward", "n": 3}),
]


@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("case", range(len(CASES_1D)))
def test_fft_ifft(name, case):
    x, kw = CASES_1D[case]
    _both(lambda m: lambda a: getattr(m.fft, name)(a, **kw), x)


CASES_ND = [
    (C3, {}),
    (C3, {"axes": (0, 2)}),
    (C3, {"axes": (2, 0)}),
    (C3, {"s": (4, 5)}),
    (C3, {"s": (2, 6), "axes": (0, 1)}),
    (C3, {"norm": "ortho", "axes": (-1,)}),
    (R4, {}),  # four axes: the op takes three at a time
    (R4, {"axes": (0, 1, 3, 2), "norm": "forward"}),
    (I2, {}),
]


@pytest.mark.parametrize("name", ["fftn", "ifftn"])
@pytest.mark.parametrize("case", range(len(CASES_ND)))
def test_fftn_ifftn(name, case):
    x, kw = CASES_ND[case]
    _both(lambda m: lambda a: getattr(m.fft, name)(a, **kw), x, rtol=5e-5)


@pytest.mark.parametrize("name", ["fft2", "ifft2"])
@pytest.mark.parametrize(
    "x, kw",
    [
        (C2, {}),
        (C3, {"axes": (0, 2)}),
        (C3, {"s": (3, 3)}),
        (R2, {"norm": "ortho"}),
    ],
)
def test_fft2_ifft2(name, x, kw):
    _both(lambda m: lambda a: getattr(m.fft, name)(a, **kw), x)


# ---- the real transforms ----

REAL_1D = [
    (R1, {}),
    (R1, {"n": 7}),
    (R1, {"n": 16}),
    (R2, {"axis": 0}),
    (R3, {"axis": 1, "norm": "ortho"}),
    (I2, {"norm": "forward"}),
]


@pytest.mark.parametrize("case", range(len(REAL_1D)))
def test_rfft(case):
    x, kw = REAL_1D[case]
    _both(lambda m: lambda a: m.fft.rfft(a, **kw), x)


@pytest.mark.parametrize(
    "x, kw",
    [
        (C2, {}),
        (C2, {"n": 9}),
        (C2, {"n": 4}),
        (C3, {"axis": 0, "n": 6}),
        (C3, {"axis": 1, "norm": "ortho"}),
        (C2, {"norm": "forward", "n": 11}),
    ],
)
def test_irfft(x, kw):
    _both(lambda m: lambda a: m.fft.irfft(a, **kw), x)


@pytest.mark.parametrize(
    "name, x, kw",
    [
        ("rfft2", R3, {}),
        ("rfft2", R3, {"axes": (0, 1), "s": (3, 4)}),
        ("irfft2", C3, {}),
        ("irfft2", C3, {"s": (5, 5)}),
        ("rfftn", R3, {}),
        ("rfftn", R4, {"norm": "ortho"}),
        ("rfftn", R3, {"axes": (2, 0)}),
        ("irfftn", C3, {}),
        ("irfftn", C3, {"s": (3, 4, 7), "norm": "forward"}),
        ("irfftn", C3, {"axes": (1, 0)}),
    ],
)
def test_real_nd(name, x, kw):
    _both(lambda m: lambda a: getattr(m.fft, name)(a, **kw), x, rtol=5e-5)


@pytest.mark.parametrize(
    "name, x, kw",
    [
        ("hfft", C2, {}),
        ("hfft", C2, {"n": 7}),
        ("hfft", C3, {"axis": 0, "norm": "ortho"}),
        ("ihfft", R2, {}),
        ("ihfft", R2, {"n": 5, "axis": 0}),
        ("ihfft", R1, {"norm": "forward"}),
    ],
)
def test_hermitian(name, x, kw):
    _both(lambda m: lambda a: getattr(m.fft, name)(a, **kw), x)


def test_round_trips_and_dtypes():
    for fn in ("fft", "ifft", "fftn", "rfft", "rfftn", "ihfft"):
        for x in (R2, I2, np.ones(5, np.bool_)):
            got = getattr(bjnp.fft, fn)(x)
            assert got.dtype == getattr(jjnp.fft, fn)(x).dtype
    x = bjnp.asarray(R3)
    _close(bjnp.fft.irfftn(bjnp.fft.rfftn(x), s=R3.shape), R3, atol=1e-5)
    _close(bjnp.fft.ifft(bjnp.fft.fft(C2)), C2, atol=1e-5)


def test_x64_gives_complex128():
    bt.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        x = R2.astype(np.float64)
        for fn in ("fft", "rfft", "fft2", "rfftn"):
            want = getattr(jjnp.fft, fn)(x)
            got = getattr(bjnp.fft, fn)(x)
            assert want.dtype == np.complex128
            _close(got, want, rtol=1e-12, atol=1e-12)
        z = np.fft.rfft(x)
        _close(bjnp.fft.irfft(z), jjnp.fft.irfft(z), rtol=1e-12, atol=1e-12)
        _close(bjnp.fft.fftfreq(8), jjnp.fft.fftfreq(8))
    finally:
        jax.config.update("jax_enable_x64", False)


def test_errors_match_jax():
    for fn, kw in [
        ("fft", {"axis": (0, 1)}),
        ("fftn", {"s": (2, 2), "axes": (0,)}),
        ("fftn", {"axes": (0, 0)}),
        ("fft", {"n": 0}),
        ("fft", {"norm": "bad"}),
        ("fft2", {"axes": (0,)}),
    ]:
        with pytest.raises(ValueError):
            getattr(jjnp.fft, fn)(C2, **kw)
        with pytest.raises(ValueError):
            getattr(bjnp.fft, fn)(C2, **kw)
    with pytest.raises(ValueError, match="only real valued inputs"):
        bjnp.fft.rfft(C2)


# ---- frequencies and shifts ----


@pytest.mark.parametrize("n", [1, 6, 7])
@pytest.mark.parametrize("d", [1.0, 0.1])
def test_frequencies(n, d):
    _close(bjnp.fft.fftfreq(n, d), jjnp.fft.fftfreq(n, d))
    _close(bjnp.fft.rfftfreq(n, d), jjnp.fft.rfftfreq(n, d))
    _close(
        bt.jit(lambda d: bjnp.fft.fftfreq(n, d))(np.float32(d)), jjnp.fft.fftfreq(n, d)
    )


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32, np.float16])
def test_frequency_dtypes(dtype):
    for fn in ("fftfreq", "rfftfreq"):
        _close(
            getattr(bjnp.fft, fn)(7, 0.5, dtype=dtype),
            getattr(jjnp.fft, fn)(7, 0.5, dtype=dtype),
            atol=1e-3,
        )


@pytest.mark.parametrize("axes", [None, 0, 1, (0,), (1, 0)])
def test_shifts(axes):
    for x in (R2, C2, R3[..., 0]):
        _both(lambda m: lambda a: m.fft.fftshift(a, axes), x)
        _both(lambda m: lambda a: m.fft.ifftshift(a, axes), x)


# ---- lax.fft ----


def test_lax_fft_accepts_jax_forms_of_fft_type():
    z = C3
    want = jax.lax.fft(z, jax.lax.FftType.FFT, (5, 4))
    for typ in (bt.lax.FftType.FFT, "fft", "FFT", jax.lax.FftType.FFT):
        _close(bt.lax.fft(z, typ, (5, 4)), want, rtol=5e-5)
    _close(
        bt.lax.fft(R3, "rfft", (4, 6)),
        jax.lax.fft(R3, jax.lax.FftType.RFFT, (4, 6)),
        rtol=5e-5,
    )
    h = np.asarray(jax.lax.fft(R3, "rfft", (6,)))
    _close(
        bt.lax.fft(h, bt.lax.FftType.IRFFT, (6,)),
        jax.lax.fft(h, jax.lax.FftType.IRFFT, (6,)),
    )
    _close(bt.lax.fft(I2, "ifft", (8,)), jax.lax.fft(I2, "ifft", (8,)))
    _close(bt.lax.fft(z, "fft", ()), jax.lax.fft(z, "fft", ()))
    with pytest.raises(ValueError):
        bt.lax.fft(z, "dct", (4,))
    with pytest.raises(TypeError):
        bt.lax.fft(z, 3.5, (4,))
    with pytest.raises(ValueError, match="fft_lengths"):
        bt.lax.fft(z, "fft", (3,))
    with pytest.raises(ValueError, match="float32 or float64"):
        bt.lax.fft(R1.astype(np.float16), "rfft", (10,))


# ---- transformations ----

GRAD_FNS = {
    "rfft_power": lambda m: lambda x: m.sum(m.abs(m.fft.rfft(x)) ** 2),
    "fft_real_part": lambda m: (
        lambda x: m.sum(m.real(m.fft.fft(x)) * m.arange(x.shape[-1]))
    ),
    "irfft_of_rfft": lambda m: (
        lambda x: m.sum(m.sin(m.fft.irfft(m.fft.rfft(x) * (1 + 0.5j), n=x.shape[-1])))
    ),
    "irfft_odd": lambda m: lambda x: m.sum(m.fft.irfft(m.fft.rfft(x), n=9) ** 2),
    "fft2_abs": lambda m: lambda x: m.sum(m.abs(m.fft.fft2(x, s=(3, 6)))),
    "ifftn_imag": lambda m: lambda x: m.sum(m.imag(m.fft.ifftn(x * 1j + x**2))),
    "hfft": lambda m: lambda x: m.sum(m.fft.hfft(x + 0.5j * x) ** 2),
    "rfftn_ortho": lambda m: (
        lambda x: m.sum(m.abs(m.fft.rfftn(x, norm="ortho")) ** 1.5)
    ),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_grad_matches_jax(name):
    f = GRAD_FNS[name]
    x = R2
    want = jax.grad(f(jjnp))(x)
    _close(bt.grad(f(bjnp))(x), want, rtol=2e-4, atol=2e-5)
    _close(bt.jit(bt.grad(f(bjnp)))(x), want, rtol=2e-4, atol=2e-5)


def test_grad_of_complex_inputs_matches_jax():
    def f(m):
        return lambda z: m.sum(
            m.abs(m.fft.fft(z, axis=0)) ** 2 + m.real(m.fft.ifft2(z))
        )

    _close(bt.grad(f(bjnp))(C2), jax.grad(f(jjnp))(C2), rtol=2e-4, atol=2e-5)

    def g(m):
        return lambda z: m.sum(m.fft.irfft(z, n=10) ** 3)

    _close(bt.grad(g(bjnp))(C2), jax.grad(g(jjnp))(C2), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("typ", ["fft", "ifft", "rfft", "irfft"])
def test_vjp_and_jvp_of_lax_fft_match_jax(typ):
    if typ == "rfft":
        x, lengths, ct_shape = R3, (4, 6), (2, 4, 4)
    elif typ == "irfft":
        x, lengths, ct_shape = C2[:, :4], (4, 6), (4, 6)
    else:
        x, lengths, ct_shape = C3, (5, 4), C3.shape
    ct = RNG.normal(size=ct_shape).astype(np.float32)
    if typ != "irfft":
        ct = (ct + 1j * RNG.normal(size=ct_shape)).astype(np.complex64)
    out_b, vjp_b = bt.vjp(lambda a: bt.lax.fft(a, typ, lengths), x)
    out_j, vjp_j = jax.vjp(lambda a: jax.lax.fft(a, typ, lengths), x)
    _close(out_b, out_j, rtol=5e-5)
    _close(vjp_b(ct)[0], vjp_j(ct)[0], rtol=5e-5)
    t = (x * 0.5 + 0.25).astype(x.dtype)
    pb, tb = bt.jvp(lambda a: bt.lax.fft(a, typ, lengths), (x,), (t,))
    pj, tj = jax.jvp(lambda a: jax.lax.fft(a, typ, lengths), (x,), (t,))
    _close(pb, pj, rtol=5e-5)
    _close(tb, tj, rtol=5e-5)


def test_vmap_matches_jax():
    def f(m):
        return lambda a: m.fft.irfft(m.fft.rfft(a) * m.fft.rfft(a[::-1]), n=7)

    _close(bt.vmap(f(bjnp))(R2), jax.vmap(f(jjnp))(R2))
    _close(bt.vmap(f(bjnp), in_axes=1)(R2.T), jax.vmap(f(jjnp), in_axes=1)(R2.T))

    def g(m):
        return lambda z: m.fft.fft2(z, axes=(0, 1))

    _close(bt.vmap(g(bjnp), in_axes=2)(C3), jax.vmap(g(jjnp), in_axes=2)(C3))
    _close(
        bt.jit(bt.vmap(bt.grad(GRAD_FNS["rfft_power"](bjnp))))(R2),
        jax.vmap(jax.grad(GRAD_FNS["rfft_power"](jjnp)))(R2),
        rtol=2e-4,
    )


# ---- baton.scipy.fft: the type-2 DCTs ----


@pytest.mark.parametrize("name", ["dct", "idct"])
@pytest.mark.parametrize(
    "x, kw",
    [
        (R1, {}),
        (R1, {"norm": "ortho"}),
        (R2, {"axis": 0}),
        (R2, {"n": 5}),
        (R2, {"n": 10, "norm": "ortho"}),
        (R3, {"axis": 1, "n": 3}),
        (I2, {}),
        (C2, {"norm": "ortho"}),
    ],
)
def test_dct_idct(name, x, kw):
    import jax.scipy.fft as jfft

    import baton.scipy.fft as bfft

    want = getattr(jfft, name)(x, **kw)
    _close(getattr(bfft, name)(x, **kw), want, rtol=5e-5)
    _close(bt.jit(lambda a: getattr(bfft, name)(a, **kw))(x), want, rtol=5e-5)


@pytest.mark.parametrize("name", ["dctn", "idctn"])
@pytest.mark.parametrize(
    "x, kw",
    [
        (R2, {}),
        (R3, {"norm": "ortho"}),
        (R3, {"axes": (0, 2)}),
        (R3, {"s": (3, 5)}),
        (R4, {"axes": (0, 1, 3)}),
    ],
)
def test_dctn_idctn(name, x, kw):
    import jax.scipy.fft as jfft

    import baton.scipy.fft as bfft

    _close(getattr(bfft, name)(x, **kw), getattr(jfft, name)(x, **kw), rtol=1e-4)


def test_dct_round_trip_grad_and_errors():
    import jax.scipy.fft as jfft

    import baton.scipy.fft as bfft

    for norm in (None, "ortho"):
        _close(bfft.idct(bfft.dct(R2, norm=norm), norm=norm), R2, atol=1e-5)
        _close(bfft.idctn(bfft.dctn(R3, norm=norm), norm=norm), R3, atol=1e-5)

    def f(m):
        return lambda x: (m.dct(x, norm="ortho")[..., 1:3] ** 2).sum()

    _close(bt.grad(f(bfft))(R2), jax.grad(f(jfft))(R2), rtol=1e-4)
    with pytest.raises(NotImplementedError):
        bfft.dct(R1, type=3)
    with pytest.raises(ValueError):
        bfft.dct(R1, norm="forward")


# ---- jax.scipy.signal's FFT convolutions ----


@pytest.mark.parametrize(
    "a, b, kw",
    [
        (R1, R1[:4], {}),
        (R1, R1[:4], {"mode": "same"}),
        (R1[:4], R1, {"mode": "valid"}),
        (R2, R2[:2, :3], {"mode": "same"}),
        (R2, R2[:, :3], {"axes": 1}),
        (R3, R3[:, :2, :3], {"axes": (1, 2), "mode": "valid"}),
        (C2, C2[:3, :2], {}),
        (I2, I2[:1, :3], {}),
    ],
)
def test_fftconvolve(a, b, kw):
    import jax.scipy.signal as jsig

    import baton.scipy.signal as bsig

    want = jsig.fftconvolve(a, b, **kw)
    _close(bsig.fftconvolve(a, b, **kw), want, rtol=1e-4)
    _close(bt.jit(lambda x, y: bsig.fftconvolve(x, y, **kw))(a, b), want, rtol=1e-4)


def test_convolve_and_correlate_method_fft():
    import jax.scipy.signal as jsig

    import baton.scipy.signal as bsig

    for mode in ("full", "same", "valid"):
        for fn in ("convolve", "correlate"):
            want = getattr(jsig, fn)(R2, R2[:2, :4], mode=mode, method="fft")
            got = getattr(bsig, fn)(R2, R2[:2, :4], mode=mode, method="fft")
            _close(got, want, rtol=1e-4)

    def g(m):
        return lambda x: (m.fftconvolve(x, x[:, ::-1], mode="same") ** 2).sum()

    _close(bt.grad(g(bsig))(R2), jax.grad(g(jsig))(R2), rtol=2e-4)


# ---- spectral programs (issue 41's acceptance point) ----


def _heat(m, u0, steps, dt, nu, length):
    """Periodic 1-D heat equation u_t = nu u_xx, advanced exactly in
    Fourier space (each mode decays as exp(-nu k^2 t)), then a nonlinear
    explicit reaction step u -= dt u^3 per step."""
    n = u0.shape[-1]
    k = 2 * np.pi * m.fft.rfftfreq(n, d=length / n)
    decay = m.exp(-nu * k**2 * dt)
    u = u0
    for _ in range(steps):
        u = m.fft.irfft(m.fft.rfft(u) * decay, n=n)
        u = u - dt * u**3
    return u


def test_spectral_heat_equation_matches_jax():
    n, length = 64, 2 * np.pi
    xs = np.linspace(0, length, n, endpoint=False, dtype=np.float32)
    u0 = (np.sin(xs) + 0.5 * np.cos(3 * xs) + 0.2 * np.sin(7 * xs)).astype(np.float32)

    def run(m):
        return lambda u: _heat(m, u, steps=20, dt=0.01, nu=0.5, length=length)

    want = run(jjnp)(u0)
    _close(run(bjnp)(u0), want, rtol=1e-4, atol=1e-5)
    _close(bt.jit(run(bjnp))(u0), want, rtol=1e-4, atol=1e-5)

    # The gradient of the final energy with respect to the initial state.
    def energy(m):
        return lambda u: m.sum(run(m)(u) ** 2)

    _close(
        bt.jit(bt.grad(energy(bjnp)))(u0),
        jax.grad(energy(jjnp))(u0),
        rtol=2e-4,
        atol=1e-5,
    )


def test_poisson_solve_and_fft_convolution_match_jax():
    n = 48
    xs = np.linspace(0, 2 * np.pi, n, endpoint=False).astype(np.float32)
    f = (np.cos(2 * xs) + np.sin(5 * xs)).astype(np.float32)

    def poisson(m):
        # -u'' = f on the periodic domain, mean-zero u.
        def solve(rhs):
            k = m.fft.fftfreq(n, d=1.0 / n)
            kk = m.where(k == 0, 1.0, k**2)
            uh = m.where(k == 0, 0.0, m.fft.fft(rhs) / kk)
            return m.real(m.fft.ifft(uh))

        return solve

    _both(poisson, f, rtol=1e-4, atol=1e-5)
    # Against the exact solution too.
    np.testing.assert_allclose(
        np.asarray(poisson(bjnp)(f)),
        np.cos(2 * xs) / 4 + np.sin(5 * xs) / 25,
        atol=1e-5,
    )

    def conv(m):
        # Linear convolution of two signals through zero-padded rfft/irfft.
        def c(a, b):
            size = a.shape[-1] + b.shape[-1] - 1
            return m.fft.irfft(m.fft.rfft(a, n=size) * m.fft.rfft(b, n=size), n=size)

        return c

    a, b = R2, R2[:, ::-1][:, :5].copy()
    _both(conv, a, b, rtol=1e-4, atol=1e-5)
    direct = np.stack([np.convolve(a[i], b[i]) for i in range(a.shape[0])])
    np.testing.assert_allclose(np.asarray(conv(bjnp)(a, b)), direct, atol=1e-4)
