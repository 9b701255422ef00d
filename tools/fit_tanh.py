#!/usr/bin/env python3
"""Fits the polynomial coefficients of fast_math.h's float32 Tanh.

Tanh(x) = sign(x) * y(|x|), a = |x|:
  a < 0.55:  y = a + a z P(z), z = a^2, P of degree 3;
  otherwise: y = 1 - 2 / (e^{2c} + 1), c = min(a, 9.1), with
             e^{2c} = 2^n Q(r), n = round(2c / ln2), r = c - n ln2/2
             (|r| <= ln2/4) and Q(r) ~ e^{2r} of degree 5, Q(0) = 1.
Each polynomial is a minimax fit of the relative error of what Tanh computes
from it (discrete Remez exchange on a dense grid, started from a Lawson
iteratively reweighted least-squares fit, float64). The coefficients are
then rounded to float32 one at a time, lowest order first, the others
refitted after each rounding, so the float32 set keeps close to the
minimax error. Printed as C++ float literals (%.9g round-trips float32).

The degrees and the 0.55 split are the cheapest found to keep the float32
evaluation (fma Horner, measured over all 2^32 inputs by
tests/cpp/kernels/fast_math_test.cc with BATON_FAST_MATH_EXHAUSTIVE=1)
within 2.5 ulp; --small-deg 4 --split 0.625 --exp-deg 6 gives ~1.4 ulp for
two more fmas.

Run: python3 tools/fit_tanh.py   (numpy only; deterministic)
"""

import argparse

import numpy as np


def remez(basis, target, weight, lo, hi, fixed=None, grid_n=20000, iters=60):
    """Minimax of weight(x) * (target(x) - sum_k c_k basis_k(x)) on a dense
    grid of [lo, hi] (Chebyshev-spaced, so both ends are sampled densely).

    basis: list of functions; fixed: {k: value} coefficients held fixed
    (moved to the target). Lawson's iteratively reweighted least squares
    finds a near-minimax fit, whose error extrema then start a Remez
    exchange that converges to the discrete minimax. Returns (coefficients,
    max weighted error on the grid).
    """
    fixed = dict(fixed or {})
    free = [k for k in range(len(basis)) if k not in fixed]
    t = np.cos(np.linspace(np.pi, 0, grid_n))
    x = lo + (hi - lo) * (t + 1) / 2
    f = target(x) - sum(v * basis[k](x) for k, v in fixed.items())
    w = weight(x)
    B = np.stack([basis[k](x) for k in free], axis=1)
    m = len(free)
    best = None

    def consider(c):
        nonlocal best
        err = w * (f - B @ c)
        emax = np.abs(err).max()
        if best is None or emax < best[1]:
            best = (c.copy(), emax)
        return err

    # Lawson.
    u = np.full(grid_n, 1.0 / grid_n)
    for _ in range(400):
        sq = np.sqrt(u) * w
        c, *_ = np.linalg.lstsq(B * sq[:, None], f * sq, rcond=None)
        err = consider(c)
        u = u * np.abs(err)
        u /= u.sum()
    # Remez exchange from the Lawson fit's alternation points.
    err = w * (f - B @ best[0])
    for _ in range(iters):
        sign = np.sign(err)
        sign[sign == 0] = 1
        runs = np.flatnonzero(np.diff(sign)) + 1
        starts = np.concatenate([[0], runs])
        ends = np.concatenate([runs, [grid_n]])
        ext = np.array([s + np.argmax(np.abs(err[s:e])) for s, e in zip(starts, ends)])
        while len(ext) > m + 1:  # drop the smaller end: keeps alternation
            ext = ext[1:] if abs(err[ext[0]]) < abs(err[ext[-1]]) else ext[:-1]
        if len(ext) < m + 1:
            break
        A = np.hstack([B[ext], ((-1.0) ** np.arange(m + 1) / w[ext])[:, None]])
        try:
            sol = np.linalg.solve(A, f[ext])
        except np.linalg.LinAlgError:
            break
        err = consider(sol[:m])
        if np.abs(err).max() <= abs(sol[m]) * (1 + 1e-6):
            break
    c, emax = best
    coef = np.zeros(len(basis))
    for k, v in fixed.items():
        coef[k] = v
    coef[free] = c
    return coef, emax


def round_sequentially(basis, target, weight, lo, hi):
    """Rounds coefficients to float32 in order, refitting the rest each time.
    Returns the float32 coefficients and their max weighted error."""
    fixed = {}
    for k in range(len(basis)):
        coef, _ = remez(basis, target, weight, lo, hi, fixed)
        fixed[k] = float(np.float32(coef[k]))
    coef = np.array([fixed[k] for k in range(len(basis))])
    x = np.linspace(lo, hi, 200001)
    err = weight(x) * (target(x) - sum(c * b(x) for c, b in zip(coef, basis)))
    return coef, np.abs(err).max()


def powers(n):
    """The monomial basis 1, x, ..., x^(n-1)."""
    return [lambda x, k=k: np.asarray(x, dtype=np.float64) ** k for k in range(n)]


def fit_small(deg, t_split):
    """P(z) ~ (tanh(a) - a) / (a z), z = a^2 <= t_split^2: tanh(a) = a + a z P(z),
    minimax on the relative error of that sum (weight a z / tanh(a))."""

    def p_true(z):
        z = np.asarray(z, dtype=np.float64)
        a = np.sqrt(z)
        safe = np.where(z < 1e-4, 1.0, a)
        series = -1 / 3 + z * (2 / 15 + z * (-17 / 315 + z * (62 / 2835)))
        return np.where(z < 1e-4, series, (np.tanh(safe) - safe) / (safe * safe * safe))

    def weight(z):
        z = np.asarray(z, dtype=np.float64)
        a = np.sqrt(z)
        return np.where(z == 0, 0.0, a * z / np.tanh(np.where(z == 0, 1.0, a)))

    basis = powers(deg + 1)
    hi = t_split * t_split
    c, e = remez(basis, p_true, weight, 0.0, hi)
    cf, ef = round_sequentially(basis, p_true, weight, 0.0, hi)
    return c, e, cf, ef


def fit_exp2r(deg, h):
    """Q(r) ~ e^{2r} on |r| <= h with Q(0) = 1: Q = 1 + r H(r), minimax on
    the relative error of Q (weight |r| / e^{2r} on H)."""

    def h_true(r):
        r = np.asarray(r, dtype=np.float64)
        safe = np.where(r == 0, 1.0, r)
        series = 2 + r * (2 + r * (4 / 3 + r * (2 / 3)))
        return np.where(np.abs(r) < 1e-3, series, np.expm1(2 * safe) / safe)

    basis = powers(deg)

    def weight(r):
        return np.abs(r) / np.exp(2 * np.asarray(r, dtype=np.float64))

    c, e = remez(basis, h_true, weight, -h, h)
    cf, ef = round_sequentially(basis, h_true, weight, -h, h)
    return np.concatenate([[1.0], c]), e, np.concatenate([[1.0], cf]), ef


def literal(v):
    """A C++ float literal that round-trips the float32 v."""
    t = f"{float(np.float32(v)):.9g}"
    return t + ("f" if any(ch in t for ch in ".e") else ".f")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small-deg", type=int, default=3, help="degree of P in z")
    ap.add_argument(
        "--split",
        type=float,
        default=0.55,
        help="|x| below which the P branch is taken",
    )
    ap.add_argument("--exp-deg", type=int, default=5, help="degree of Q")
    ap.add_argument(
        "--margin",
        type=float,
        default=1e-3,
        help="relative widening of |r| <= ln2/4 (rounding of n)",
    )
    args = ap.parse_args()
    ulp = 2.0**-24
    _, e, cf, ef = fit_small(args.small_deg, args.split)
    print(
        f"// P: degree {args.small_deg} in z on |x| < {args.split}: relative "
        f"error {e:.3e} ({e / ulp:.3f} * 2^-24), float32 coefficients "
        f"{ef:.3e} ({ef / ulp:.3f} * 2^-24); P0 first"
    )
    for k, v in enumerate(cf):
        print(f"  P{k} = {literal(v)}")
    h = np.log(2) / 4 * (1 + args.margin)
    _, e, cf, ef = fit_exp2r(args.exp_deg, h)
    print(
        f"// Q: degree {args.exp_deg} on |r| <= {h:.6f}: relative error "
        f"{e:.3e} ({e / ulp:.3f} * 2^-24), float32 coefficients {ef:.3e} "
        f"({ef / ulp:.3f} * 2^-24); Q0 first"
    )
    for k, v in enumerate(cf):
        print(f"  Q{k} = {literal(v)}")


if __name__ == "__main__":
    main()
