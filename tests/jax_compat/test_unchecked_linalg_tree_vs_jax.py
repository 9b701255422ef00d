"""bt.scipy.linalg's det, eigh, inv, lu, qr, solve, svd and bt.tree_util's
KeyEntry, KeyPath, PyTreeDef, register_pytree_with_keys_class and
treedef_tuple against JAX: the same values, shapes and dtypes (for the
decompositions whose factors are unique only up to signs, the invariant
quantities and reconstructions), under bt.jit and with gradients where
cheap; the same trees, keys and leaves for the tree utilities."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from jax import tree_util as jtu  # noqa: E402

import baton as bt  # noqa: E402
import baton.numpy as bnp  # noqa: E402
import baton.scipy.linalg as bsl  # noqa: E402
from baton import tree_util as btu  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(11)


def _close(b, j, rtol=1e-4, atol=1e-4):
    b, j = np.asarray(b), np.asarray(j)
    assert b.shape == j.shape, (b.shape, j.shape)
    assert b.dtype == j.dtype, (b.dtype, j.dtype)
    np.testing.assert_allclose(b, j, rtol=rtol, atol=atol)


def _rand(shape):
    return RNG.standard_normal(shape).astype(F32)


def _spd(n, batch=()):
    a = _rand((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=F32)).astype(F32)


def _well(n, batch=()):
    return (_rand((*batch, n, n)) + 3 * np.eye(n, dtype=F32)).astype(F32)


# ---- det, inv, solve ----


@pytest.mark.parametrize("batch", [(), (2,)])
def test_det(batch):
    a = _well(4, batch)
    _close(bsl.det(a), jsl.det(a))
    _close(bt.jit(bsl.det)(a), jsl.det(a))
    _close(
        bt.grad(lambda m: bnp.sum(bsl.det(m)))(a),
        jax.grad(lambda m: jnp.sum(jsl.det(m)))(a),
        rtol=2e-3,
        atol=2e-3,
    )


def test_det_singular_and_2x2():
    s = np.array([[1.0, 2.0], [2.0, 4.0]], F32)
    _close(bsl.det(s), jsl.det(s))
    s3 = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [4.0, -3.0, 8.0]], F32)
    _close(bsl.det(s3), jsl.det(s3))


@pytest.mark.xfail(
    raises=TypeError,
    strict=True,
    reason="baton's linear algebra is real-only (no complex LAPACK): "
    "scipy.linalg.det raises TypeError for complex64, JAX computes it",
)
def test_det_complex():
    z = np.array([[1 + 1j, 2], [3j, 4 - 1j]], np.complex64)
    _close(bsl.det(z), jsl.det(z), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch", [(), (3,)])
def test_inv(batch):
    a = _well(4, batch)
    _close(bsl.inv(a), jsl.inv(a))
    _close(bt.jit(bsl.inv)(a), jsl.inv(a))
    _close(
        bt.grad(lambda m: bnp.sum(bsl.inv(m) ** 2))(a),
        jax.grad(lambda m: jnp.sum(jsl.inv(m) ** 2))(a),
        rtol=1e-3,
        atol=1e-3,
    )


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
@pytest.mark.parametrize("bshape", [(4,), (4, 2)])
def test_solve(assume_a, bshape):
    a = _spd(4)
    b = _rand(bshape)
    want = jsl.solve(a, b, assume_a=assume_a)
    _close(bsl.solve(a, b, assume_a=assume_a), want)
    _close(bt.jit(lambda m, v: bsl.solve(m, v, assume_a=assume_a))(a, b), want)
    gb = bt.grad(
        lambda m, v: bnp.sum(bsl.solve(m, v, assume_a=assume_a) ** 2), argnums=(0, 1)
    )(a, b)
    gj = jax.grad(
        lambda m, v: jnp.sum(jsl.solve(m, v, assume_a=assume_a) ** 2), argnums=(0, 1)
    )(a, b)
    for u, v in zip(gb, gj):
        _close(u, v, rtol=1e-3, atol=1e-4)


def test_solve_lower_general():
    a, b = _well(3), _rand((3, 2))
    _close(bsl.solve(a, b, lower=True), jsl.solve(a, b, lower=True))


# ---- lu ----


@pytest.mark.parametrize(
    "shape",
    [
        (4, 4),
        (1, 1),
        pytest.param(
            (5, 3),
            marks=pytest.mark.xfail(
                raises=ValueError,
                strict=True,
                reason="baton's lu is square-only (ValueError); "
                "JAX factors rectangular a",
            ),
        ),
        pytest.param(
            (3, 5),
            marks=pytest.mark.xfail(
                raises=ValueError,
                strict=True,
                reason="baton's lu is square-only (ValueError); "
                "JAX factors rectangular a",
            ),
        ),
    ],
)
def test_lu(shape):
    a = _rand(shape)
    bp, bl, bu = bsl.lu(a)
    jp, jl, ju = jsl.lu(a)
    _close(bp, jp)
    _close(bl, jl)
    _close(bu, ju)
    pl, u = bsl.lu(a, permute_l=True)
    jpl, jpu = jsl.lu(a, permute_l=True)
    _close(pl, jpl)
    _close(u, jpu)
    _close(bt.jit(lambda m: bsl.lu(m)[2])(a), ju)


@pytest.mark.xfail(
    raises=NotImplementedError,
    strict=True,
    reason="baton's lu has no reverse-mode derivative rule "
    "(vjp: lu has no reverse-mode derivative rule); JAX differentiates it",
)
def test_lu_grad():
    a = _rand((4, 4))
    gb = bt.grad(lambda m: bnp.sum(bsl.lu(m)[2] ** 2) + bnp.sum(bsl.lu(m)[1]))(a)
    gj = jax.grad(lambda m: jnp.sum(jsl.lu(m)[2] ** 2) + jnp.sum(jsl.lu(m)[1]))(a)
    _close(gb, gj, rtol=1e-3, atol=1e-3)


# ---- eigh ----


@pytest.mark.parametrize("lower", [True, False])
def test_eigh(lower):
    a = _spd(5)
    # only the chosen triangle is read: spoil the other one
    spoiled = (
        a
        + (
            np.triu(np.ones((5, 5), F32), 1)
            if lower
            else np.tril(np.ones((5, 5), F32), -1)
        )
        * 7
    )
    bw, bv = bsl.eigh(spoiled, lower=lower)
    jw, jv = jsl.eigh(spoiled, lower=lower)
    _close(bw, jw)
    assert np.asarray(bv).shape == np.asarray(jv).shape
    assert np.asarray(bv).dtype == np.asarray(jv).dtype
    # eigenvectors up to sign: |<b_i, j_i>| = 1, and a v = v w
    dots = np.abs(np.sum(np.asarray(bv) * np.asarray(jv), axis=0))
    np.testing.assert_allclose(dots, np.ones(5), atol=1e-4)
    # JAX symmetrizes first: the eigenpairs are those of (s + s^T) / 2
    sym = (spoiled + spoiled.T) / 2
    np.testing.assert_allclose(
        sym @ np.asarray(bv), np.asarray(bv) * np.asarray(bw), atol=1e-3
    )
    _close(bsl.eigh(spoiled, lower=lower, eigvals_only=True), jw)
    _close(bt.jit(lambda m: bsl.eigh(m, lower=lower)[0])(spoiled), jw)
    _close(
        bt.grad(lambda m: bnp.sum(bsl.eigh(m, eigvals_only=True) * bnp.arange(5.0)))(a),
        jax.grad(lambda m: jnp.sum(jsl.eigh(m, eigvals_only=True) * jnp.arange(5.0)))(
            a
        ),
        rtol=1e-3,
        atol=1e-4,
    )


def test_eigh_generalized_unsupported_in_both():
    a, b = _spd(4), _spd(4)
    with pytest.raises(NotImplementedError):
        jsl.eigh(a, b, eigvals_only=True)
    with pytest.raises(NotImplementedError):
        bsl.eigh(a, b, eigvals_only=True)


# ---- qr ----


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr(mode, shape):
    a = _rand(shape)
    b = bsl.qr(a, mode=mode)
    j = jsl.qr(a, mode=mode)
    if mode == "r":
        (br,), (jr,) = b, j
        bq = jq = None
    else:
        bq, br = b
        jq, jr = j
    # R is unique up to the signs of its rows (Q's columns): compare |R| and
    # the reconstruction, and Q's orthonormality.
    _close(np.abs(np.asarray(br)), np.abs(np.asarray(jr)))
    if bq is not None:
        assert np.asarray(bq).shape == np.asarray(jq).shape
        assert np.asarray(bq).dtype == np.asarray(jq).dtype
        k = min(shape)
        np.testing.assert_allclose(
            np.asarray(bq)[:, :k] @ np.asarray(br)[:k], a, atol=1e-4
        )
        bqa = np.asarray(bq)
        np.testing.assert_allclose(bqa.T @ bqa, np.eye(bqa.shape[1]), atol=1e-4)
        # same subspace, same column signs up to the sign of R's diagonal
        sb = np.sign(np.diag(np.asarray(br)[:k]))
        sj = np.sign(np.diag(np.asarray(jr)[:k]))
        np.testing.assert_allclose(
            bqa[:, :k] * sb, np.asarray(jq)[:, :k] * sj, atol=1e-4
        )
    jitted = bt.jit(lambda m: bsl.qr(m, mode=mode)[-1])(a)
    _close(np.abs(np.asarray(jitted)), np.abs(np.asarray(jr)))


def test_qr_grad_of_invariant():
    a = _rand((5, 3))
    # |R|'s square sum is sign invariant (= |A|_F^2)... use diag(R)^2 instead
    gb = bt.grad(lambda m: bnp.sum(bnp.diagonal(bsl.qr(m, mode="economic")[1]) ** 2))(a)
    gj = jax.grad(lambda m: jnp.sum(jnp.diagonal(jsl.qr(m, mode="economic")[1]) ** 2))(
        a
    )
    _close(gb, gj, rtol=1e-3, atol=1e-4)


# ---- svd ----


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd(full_matrices, shape):
    a = _rand(shape)
    bu, bs, bvh = bsl.svd(a, full_matrices=full_matrices)
    ju, js, jvh = jsl.svd(a, full_matrices=full_matrices)
    _close(bs, js)
    for b, j in ((bu, ju), (bvh, jvh)):
        assert np.asarray(b).shape == np.asarray(j).shape
        assert np.asarray(b).dtype == np.asarray(j).dtype
    k = min(shape[-2:])
    bu, bs, bvh = (np.asarray(v) for v in (bu, bs, bvh))
    recon = (bu[..., :, :k] * bs[..., None, :]) @ bvh[..., :k, :]
    np.testing.assert_allclose(recon, a, atol=1e-4)
    # singular vectors up to sign (distinct singular values): |<u_b, u_j>| = 1
    dots = np.abs(np.sum(bu[..., :, :k] * np.asarray(ju)[..., :, :k], axis=-2))
    np.testing.assert_allclose(dots, np.ones_like(dots), atol=1e-3)
    _close(bsl.svd(a, compute_uv=False), js)
    _close(bt.jit(lambda m: bsl.svd(m, compute_uv=False))(a), js)
    _close(
        bt.grad(lambda m: bnp.sum(bsl.svd(m, compute_uv=False) ** 3))(a),
        jax.grad(lambda m: jnp.sum(jsl.svd(m, compute_uv=False) ** 3))(a),
        rtol=1e-3,
        atol=1e-3,
    )


# ---- tree_util ----


@btu.register_pytree_with_keys_class
class BPair:
    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag

    def tree_flatten_with_keys(self):
        return ((btu.GetAttrKey("a"), self.a), (btu.DictKey("bee"), self.b)), self.tag

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, tag=aux)


@jtu.register_pytree_with_keys_class
class JPair:
    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag

    def tree_flatten_with_keys(self):
        return ((jtu.GetAttrKey("a"), self.a), (jtu.DictKey("bee"), self.b)), self.tag

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, tag=aux)


def test_register_pytree_with_keys_class():
    # the decorator returns the class itself, as JAX's
    def fresh():
        return type(
            "X",
            (),
            {
                "tree_flatten_with_keys": lambda self: ((), None),
                "tree_unflatten": classmethod(lambda cls, aux, ch: cls()),
            },
        )

    cb, cj = fresh(), fresh()
    assert btu.register_pytree_with_keys_class(cb) is cb
    assert jtu.register_pytree_with_keys_class(cj) is cj
    assert btu.tree_leaves([cb(), 1]) == jtu.tree_leaves([cj(), 1]) == [1]
    b = {"p": BPair(1, [2, 3], "x")}
    j = {"p": JPair(1, [2, 3], "x")}
    assert btu.tree_leaves(b) == jtu.tree_leaves(j)
    bk = btu.tree_flatten_with_path(b)[0]
    jk = jtu.tree_flatten_with_path(j)[0]
    assert [(btu.keystr(p), v) for p, v in bk] == [(jtu.keystr(p), v) for p, v in jk]
    assert [repr(p) for p, _ in bk] == [repr(p) for p, _ in jk]
    out = btu.tree_map(lambda v: v * 10, b)
    assert isinstance(out["p"], BPair) and out["p"].tag == "x"
    assert (out["p"].a, out["p"].b) == (10, [20, 30])
    # through bt.jit, as with JAX
    got = bt.jit(lambda t: t["p"].a + t["p"].b[1])(
        {"p": BPair(np.float32(1), [np.float32(2), np.float32(3)])}
    )
    want = jax.jit(lambda t: t["p"].a + t["p"].b[1])(
        {"p": JPair(np.float32(1), [np.float32(2), np.float32(3)])}
    )
    _close(got, want)


TREES = [[1, (2, 3)], {"a": 1, "b": [2]}, (), None, 5]


def test_treedef_tuple():
    bdefs = [btu.tree_structure(t) for t in TREES]
    jdefs = [jtu.tree_structure(t) for t in TREES]
    bt_ = btu.treedef_tuple(bdefs)
    jt_ = jtu.treedef_tuple(jdefs)
    assert isinstance(bt_, btu.PyTreeDef)
    assert isinstance(jt_, jtu.PyTreeDef)
    assert bt_.num_leaves == jt_.num_leaves
    assert bt_.num_nodes == jt_.num_nodes
    leaves = list(range(10, 10 + jt_.num_leaves))
    assert btu.tree_unflatten(bt_, leaves) == jtu.tree_unflatten(jt_, leaves)
    assert btu.treedef_children(bt_) == bdefs
    assert bt_ == btu.tree_structure(tuple(TREES))
    assert jt_ == jtu.tree_structure(tuple(TREES))
    empty_b, empty_j = btu.treedef_tuple([]), jtu.treedef_tuple([])
    assert empty_b.num_nodes == empty_j.num_nodes == 1
    assert btu.tree_unflatten(empty_b, []) == jtu.tree_unflatten(empty_j, []) == ()


def test_pytreedef_type_and_methods():
    tree = {"x": [1, 2], "y": (3, None)}
    bd, jd = btu.tree_structure(tree), jtu.tree_structure(tree)
    assert isinstance(bd, btu.PyTreeDef) and isinstance(jd, jtu.PyTreeDef)
    assert not isinstance(tree, btu.PyTreeDef)
    assert (bd.num_leaves, bd.num_nodes) == (jd.num_leaves, jd.num_nodes)
    assert bd.unflatten([7, 8, 9]) == jd.unflatten([7, 8, 9])
    assert [c.num_leaves for c in bd.children()] == [
        c.num_leaves for c in jd.children()
    ]
    assert btu.treedef_is_leaf(btu.tree_structure(1)) == jtu.treedef_is_leaf(
        jtu.tree_structure(1)
    )
    assert bd == btu.tree_structure({"y": (0, None), "x": [0, 0]})
    assert bd != btu.tree_structure({"x": [1], "y": (3, None)})
    assert hash(bd) == hash(btu.tree_structure(tree))


def _key_type_check(mod, path):
    # KeyPath is tuple[KeyEntry, ...]: a path is a tuple of key entries
    return isinstance(
        path,
        mod.KeyPath.__origin__ if hasattr(mod.KeyPath, "__origin__") else mod.KeyPath,
    )


def test_keypath_keyentry():
    tree = {"a": [1, (2,)], "b": BPair(3, 4)}
    jtree = {"a": [1, (2,)], "b": JPair(3, 4)}
    bpaths = [p for p, _ in btu.tree_flatten_with_path(tree)[0]]
    jpaths = [p for p, _ in jtu.tree_flatten_with_path(jtree)[0]]
    for bp, jp in zip(bpaths, jpaths, strict=True):
        assert _key_type_check(btu, bp) and _key_type_check(jtu, jp)
        assert type(bp) is type(jp) is tuple
        assert [type(k).__name__ for k in bp] == [type(k).__name__ for k in jp]
        assert btu.keystr(bp) == jtu.keystr(jp)

    # KeyEntry / KeyPath are usable as annotations, as in JAX
    def f(path: btu.KeyPath, entry: btu.KeyEntry) -> btu.KeyPath:
        return (*path, entry)

    assert f(bpaths[0], btu.SequenceKey(5))[-1] == btu.SequenceKey(5)
    assert btu.KeyPath is tuple or getattr(btu.KeyPath, "__origin__", None) is tuple
