"""The baton package has no import circles and imports only down its layers
(issue 39).

tools/check_python_imports.py builds the import graph of python/baton (lazy
imports inside functions count) and fails on a circle not in its KNOWN list
(empty), on a KNOWN entry that is no longer a circle, so the list only
shrinks, on a module its LAYERS do not place, and on an import from a lower
layer to a higher one. These tests run it on this checkout, and on small
planted packages to show that it catches what it is for.
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "check_python_imports.py"


def run_check(*args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def plant(tmp_path, files, known=None, layers=(("all", "baton baton.*"),)):
    """A package `baton` under tmp_path; returns the check's arguments.
    `layers`: (name, patterns) lowest first; by default one for everything."""
    root = tmp_path / "baton"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    known_file = tmp_path / "known.txt"
    known_file.write_text("".join(" ".join(c) + "\n" for c in known or ()))
    layers_file = tmp_path / "layers.txt"
    layers_file.write_text("".join(f"{name}: {pats}\n" for name, pats in layers))
    return ["--root", root, "--known", known_file, "--layers", layers_file]


def test_this_checkout_has_no_circles_and_keeps_its_layers():
    result = run_check()
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 circle(s)" in result.stdout
    assert "every import down the layers" in result.stdout


def test_this_checkout_tolerates_no_circle():
    # issue 39 broke them all: KNOWN is empty, so any circle fails.
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import check_python_imports
    finally:
        sys.path.remove(str(SCRIPT.parent))
    assert check_python_imports.KNOWN == frozenset()


def test_a_package_without_circles_passes(tmp_path):
    args = plant(
        tmp_path,
        {"a.py": "from baton import b\n", "b.py": "import os\n"},
    )
    result = run_check(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 circle(s)" in result.stdout


def test_a_planted_circle_fails_and_names_its_modules(tmp_path):
    args = plant(
        tmp_path,
        {"a.py": "from baton import b\n", "b.py": "import baton.a\n"},
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "a new circle: {baton.a, baton.b}" in result.stdout
    assert "baton.a -> baton.b" in result.stdout
    assert "baton.b -> baton.a" in result.stdout


def test_a_lazy_relative_import_closes_a_circle_too(tmp_path):
    # b imports a inside a function, relatively, from a subpackage.
    args = plant(
        tmp_path,
        {
            "a.py": "from baton.sub import b\n",
            "sub/__init__.py": "",
            "sub/b.py": "def f():\n    from .. import a\n    return a\n",
        },
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "a new circle: {baton.a, baton.sub.b}" in result.stdout
    assert "baton.sub.b -> baton.a  (lazy)" in result.stdout
    assert "baton/sub/b.py:2: baton.a" in result.stdout


def test_a_known_circle_passes(tmp_path):
    args = plant(
        tmp_path,
        {"a.py": "from baton import b\n", "b.py": "from . import a\n"},
        known=[("baton.a", "baton.b")],
    )
    result = run_check(*args)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_known_circle_that_grew_fails(tmp_path):
    args = plant(
        tmp_path,
        {
            "a.py": "from baton import b\n",
            "b.py": "from baton import c\n",
            "c.py": "from baton import a\n",
        },
        known=[("baton.a", "baton.b")],
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "a known circle grew" in result.stdout
    assert "added: baton.c" in result.stdout


def test_a_known_circle_that_is_gone_is_reported_stale(tmp_path):
    # The circle was broken: the KNOWN entry must go, so the list shrinks.
    args = plant(
        tmp_path,
        {"a.py": "from baton import b\n", "b.py": "import os\n"},
        known=[("baton.a", "baton.b")],
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "stale KNOWN entry {baton.a, baton.b}: that circle is gone" in result.stdout


def test_a_known_circle_that_shrank_is_reported_stale(tmp_path):
    args = plant(
        tmp_path,
        {
            "a.py": "from baton import b\n",
            "b.py": "from baton import a\n",
            "c.py": "from baton import a\n",
        },
        known=[("baton.a", "baton.b", "baton.c")],
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "stale KNOWN entry {baton.a, baton.b, baton.c}" in result.stdout
    assert "replace the entry with {baton.a, baton.b}" in result.stdout


def test_list_prints_every_component(tmp_path):
    args = plant(
        tmp_path,
        {"a.py": "from baton import b\n", "b.py": "import os\n"},
    )
    result = run_check(*args, "--list")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for module in ("baton", "baton.a", "baton.b"):
        assert module in lines


LOW_HIGH = (("low", "baton.low"), ("high", "baton baton.high"))


def test_imports_down_the_layers_pass(tmp_path):
    args = plant(
        tmp_path,
        {"low.py": "import os\n", "high.py": "from baton import low\n"},
        layers=LOW_HIGH,
    )
    result = run_check(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 layers" in result.stdout


def test_an_import_up_a_layer_fails(tmp_path):
    args = plant(
        tmp_path,
        {"low.py": "import baton.high\n", "high.py": "import os\n"},
        layers=LOW_HIGH,
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "baton/low.py:1: baton.low (layer low) imports baton.high (layer high): "
        "an import up a layer" in result.stdout
    )


def test_a_lazy_import_up_a_layer_fails_too(tmp_path):
    # No circle here: only the layers say that low may not use high.
    args = plant(
        tmp_path,
        {
            "low.py": "def f():\n    from baton import high\n    return high\n",
            "high.py": "import os\n",
        },
        layers=LOW_HIGH,
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0 circle(s)" in result.stderr
    assert "baton/low.py:2: baton.low (layer low) imports baton.high" in result.stdout
    assert "(lazily): an import up a layer" in result.stdout


def test_a_module_in_no_layer_fails(tmp_path):
    args = plant(
        tmp_path,
        {"low.py": "import os\n", "high.py": "import os\n", "new.py": ""},
        layers=LOW_HIGH,
    )
    result = run_check(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "baton.new is in no layer; place it in LAYERS" in result.stdout
