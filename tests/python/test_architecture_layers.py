"""Layers only call down, and nothing above the backend names the CPU one.

tools/check_layers.py checks the #include lines of src/baton and python/src
(DESIGN section 2; section 6: the jit compiles and runs through the
backend-neutral Executable). These tests run it on this checkout, and on
small planted trees to show that it catches what it is for.
"""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "check_layers.py"


def run_check(root):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def plant(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# A tree that keeps every rule: each layer includes only its own and lower.
GOOD = {
    "src/baton/core/status.h": "#pragma once\n",
    "src/baton/runtime/array.h": '#include "baton/core/status.h"\n',
    "src/baton/collectives/group.h": '#include "baton/core/status.h"\n',
    "src/baton/compiler/ir.h": '#include "baton/core/status.h"\n',
    "src/baton/backend/executable.h": (
        '#include "baton/compiler/ir.h"\n#include "baton/runtime/array.h"\n'
    ),
    "src/baton/backend/executable.cc": (
        '#include "baton/backend/cpu/cpu_executable.h"\n'
    ),
    "src/baton/backend/cpu/cpu_executable.h": (
        '#include "baton/backend/executable.h"\n'
        "namespace baton::cpu { class CpuExecutable; }\n"
    ),
    "src/baton/jit/jit.h": (
        '#include "baton/backend/executable.h"\n'
        "// Not cpu::CpuExecutable: comments and strings may name it.\n"
        'const char* kWhy = "cpu::CpuExecutable";\n'
    ),
    "python/src/jit.cc": (
        '#include "baton/jit/jit.h"\n/* cpu::\n cpu:: */\n'
    ),
}


def test_this_checkout_keeps_the_layering():
    result = run_check(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_tree_that_keeps_the_rules_passes(tmp_path):
    plant(tmp_path, GOOD)
    result = run_check(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "rel, text, says",
    [
        # A lower layer including a higher one.
        (
            "src/baton/runtime/client.h",
            '#include "baton/core/status.h"\n#include "baton/backend/cpu/x.h"\n',
            "src/baton/runtime/client.h:2: includes baton/backend/cpu/x.h: "
            "runtime (layer 1) may not include backend (layer 3)",
        ),
        (
            "src/baton/compiler/pass.cc",
            '#include "baton/jit/jit.h"\n',
            "compiler (layer 2) may not include jit (layer 4)",
        ),
        # Peers.
        (
            "src/baton/collectives/store.cc",
            '#include "baton/runtime/array.h"\n',
            "collectives and runtime are peers",
        ),
        # One backend including another.
        (
            "src/baton/backend/cuda/exe.cc",
            '#include "baton/backend/cpu/cpu_executable.h"\n',
            "the cuda backend may include only itself",
        ),
        # Above the backend: the CPU backend by include or by name.
        (
            "src/baton/jit/jit.cc",
            '#include "baton/backend/cpu/cpu_executable.h"\n',
            "src/baton/jit/jit.cc:1: includes baton/backend/cpu/cpu_executable.h: "
            "jit names no backend",
        ),
        (
            "python/src/environment.cc",
            "int x = 0;\nauto info = baton::cpu::QueryBlasInfo();\n",
            "python/src/environment.cc:2: names cpu::",
        ),
        # A folder that is no layer.
        (
            "src/baton/misc/helper.h",
            "#pragma once\n",
            "src/baton/misc/helper.h:1: not in a known layer",
        ),
    ],
)
def test_a_planted_violation_is_reported(tmp_path, rel, text, says):
    plant(tmp_path, GOOD)
    plant(tmp_path, {rel: text})
    result = run_check(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert says in result.stdout
    # Only the planted file is reported.
    for line in result.stdout.splitlines():
        assert line.startswith(rel + ":"), line
