"""baton.as_jax: ``import jax`` giving baton, and ``python -m baton.as_jax``.

Every test that installs the hook does so in a child process (the hook
changes what ``import jax`` means for the whole process), run with a
timeout.
"""

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

TIMEOUT = 240


def _run(args, cwd=None, env_extra=None):
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    if env_extra:
        env.update(env_extra)
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _script(tmp_path, body, name="prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def _ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_import_jax_is_baton(tmp_path):
    script = _script(
        tmp_path,
        """
        import sys
        import jax
        import jax.numpy as jnp
        import baton
        import baton.numpy
        assert jax is baton, jax
        assert jnp is baton.numpy
        assert sys.modules["jax"] is baton
        x = jnp.arange(4.0)
        y = jax.jit(lambda v: jnp.sum(v * v))(x)
        g = jax.grad(lambda v: jnp.sum(v * v))(x)
        print("sum", float(y), [float(v) for v in g])
        print("name", jax.numpy.__name__, jax.numpy.__spec__.name)
        """,
    )
    out = _ok(_run(["-m", "baton.as_jax", script]))
    assert "sum 14.0 [0.0, 2.0, 4.0, 6.0]" in out
    # The baton modules keep their own identity.
    assert "name baton.numpy baton.numpy" in out


def test_jax_submodules_resolve_to_baton(tmp_path):
    script = _script(
        tmp_path,
        """
        import importlib
        import baton
        names = ["numpy", "lax", "nn", "random", "tree", "tree_util", "scipy",
                 "scipy.special", "typing", "core", "dtypes", "flatten_util",
                 "numpy.linalg", "nn.initializers"]
        for n in names:
            j = importlib.import_module("jax." + n)
            b = importlib.import_module("baton." + n)
            assert j is b, (n, j, b)
        from jax import tree_util, flatten_util
        from jax.typing import ArrayLike
        from jax.core import Tracer
        from jax.dtypes import canonicalize_dtype
        import jax.scipy.special as jss
        assert tree_util is baton.tree_util
        assert flatten_util is baton.flatten_util
        assert Tracer is baton.core.Tracer
        assert jss is baton.scipy.special
        import jax
        print("leaves", jax.tree.leaves({"b": 1, "a": 2}))
        print("ok")
        """,
    )
    out = _ok(_run(["-m", "baton.as_jax", script]))
    assert "leaves [2, 1]" in out and "ok" in out


def test_missing_jax_submodule_fails_clearly(tmp_path):
    script = _script(
        tmp_path,
        """
        try:
            import jax.no_such_thing.deeper
        except ModuleNotFoundError as e:
            print("name", e.name)
            print("msg", e)
        try:
            from jax.no_such_module import x
        except ImportError as e:
            print("from", type(e).__name__)
        import jax
        assert not hasattr(jax, "no_such_thing")
        """,
    )
    out = _ok(_run(["-m", "baton.as_jax", script]))
    assert "name jax.no_such_thing" in out
    assert "baton does not provide jax.no_such_thing" in out
    assert "from ModuleNotFoundError" in out


@pytest.mark.skipif(
    importlib.util.find_spec("jax") is None, reason="needs the real jax installed"
)
def test_refuses_when_real_jax_was_imported(tmp_path):
    script = _script(
        tmp_path,
        """
        import jax  # the real one
        import baton.as_jax
        try:
            baton.as_jax.install()
        except RuntimeError as e:
            print("refused:", e)
        assert not baton.as_jax.installed()
        import sys
        assert sys.modules["jax"] is jax and jax.__name__ == "jax"
        """,
    )
    out = _ok(_run([script]))
    assert "refused:" in out and "real JAX is already imported" in out


def test_install_is_idempotent_and_uninstall_restores(tmp_path):
    script = _script(
        tmp_path,
        """
        import sys
        import baton.as_jax
        baton.as_jax.install()
        baton.as_jax.install()
        from baton.as_jax import _FINDER
        assert sys.meta_path.count(_FINDER) == 1
        import jax.numpy
        import baton
        assert sys.modules["jax"] is baton
        baton.as_jax.uninstall()
        assert not baton.as_jax.installed()
        assert "jax" not in sys.modules and "jax.numpy" not in sys.modules
        assert baton.numpy.__name__ == "baton.numpy"
        print("ok")
        """,
    )
    assert "ok" in _ok(_run([script]))


def test_module_form_with_args(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tool.py").write_text(
        textwrap.dedent(
            """
            import sys
            import jax
            import jax.numpy as jnp
            if __name__ == "__main__":
                print("argv", sys.argv[1:])
                print("argv0", sys.argv[0].endswith("tool.py"))
                print("jax", jax.__name__)
                print("value", float(jnp.sum(jnp.ones(int(sys.argv[1])))))
                sys.exit(int(sys.argv[2]))
            """
        )
    )
    proc = _run(["-m", "baton.as_jax", "-m", "mypkg.tool", "5", "3"], cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "argv ['5', '3']" in proc.stdout
    assert "argv0 True" in proc.stdout
    assert "jax baton" in proc.stdout
    assert "value 5.0" in proc.stdout


def test_script_form_argv_and_path(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "helper.py").write_text("VALUE = 7\n")
    script = _script(
        sub,
        """
        import sys
        import helper  # the script's folder is on sys.path
        import jax.numpy as jnp
        print("argv", sys.argv)
        print("main", __name__)
        print("value", helper.VALUE + int(jnp.ones(()).item()))
        """,
    )
    proc = _run(["-m", "baton.as_jax", script, "--flag", "x"], cwd=tmp_path)
    out = _ok(proc)
    assert f"argv [{script!r}, '--flag', 'x']" in out
    assert "main __main__" in out
    assert "value 8" in out


def test_code_form_and_errors():
    out = _ok(
        _run(
            [
                "-m",
                "baton.as_jax",
                "-c",
                "import sys, jax; print(jax.__name__, sys.argv[1:], __name__)",
                "a",
            ]
        )
    )
    assert "baton ['a'] __main__" in out

    proc = _run(["-m", "baton.as_jax"])
    assert proc.returncode == 2 and "usage" in proc.stderr

    proc = _run(["-m", "baton.as_jax", "/no/such/script.py"])
    assert proc.returncode == 2 and "can't open file" in proc.stderr

    proc = _run(["-m", "baton.as_jax", "-c", "raise ValueError('boom')"])
    assert proc.returncode == 1 and "ValueError: boom" in proc.stderr


def test_jit_accepts_jax_inline_argument():
    # optax's tree math passes jax.jit(..., inline=True); baton inlines a
    # jitted function called while another is traced anyway.
    import numpy as np

    import baton as bt

    f = bt.jit(lambda x: x * 2, inline=True)
    g = bt.jit(lambda x: f(x) + 1)
    np.testing.assert_array_equal(np.asarray(g(np.arange(3.0))), [1.0, 3.0, 5.0])
    with pytest.raises(TypeError, match="inline must be a bool"):
        bt.jit(lambda x: x, inline="yes")


def test_log_compiles_reaches_the_jax_logger(tmp_path):
    # optax's test utilities listen on logging.getLogger("jax") for
    # "Finished ... compilation" records while jax.log_compiles() is active.
    script = _script(
        tmp_path,
        """
        import logging, re
        import jax, jax.numpy as jnp
        seen = []
        class H(logging.Handler):
            def emit(self, record):
                seen.append(record.getMessage())
        logging.getLogger("jax").addHandler(H())
        f = jax.jit(lambda x: x * 2)
        with jax.log_compiles():
            f(jnp.ones(3))
            first = len(seen)
            f(jnp.ones(3))
        assert first == 1 and len(seen) == 1, seen
        assert re.search(r"Finished .* compilation", seen[0]), seen
        print("ok")
        """,
    )
    assert _ok(_run(["-m", "baton.as_jax", script])).strip() == "ok"
