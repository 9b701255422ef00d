"""Which of baton's JAX-named public names the JAX comparison suite checks.

A pytest plugin (loaded by conftest.py when ``BATON_API_COVERAGE`` names an
output file): while tests/jax_compat runs, every attribute a test file reads
from one of baton's JAX-named namespaces (``bt.vmap``, ``bnp.fft.rfft``,
``getattr(bsl, name)``, ``from baton.scipy.special import erf``) is noted,
with the test that read it. Only reads made by code in this directory (the
tests and their helpers) count: baton's own modules reading each other's
names do not. At the end of the session it writes, per JAX namespace, each
name read and whether every test that read it passed:

    {"jax.scipy.linalg": {"schur": "passed", ...}, ...}

``tools/namespace_coverage.py --checked FILE`` turns that into the coverage
report (present and matching, differing, present but unchecked, missing).
A name read only at a test file's top level (``from ... import name``) is
credited to that file's tests. Names whose checks are tables rather than
attribute reads (the jax.numpy probes of tools/jnp_coverage.py) are credited
with ``credit()``.

The namespaces' module objects get a subclass of ModuleType whose
``__getattribute__`` does the noting (Python allows assigning a module's
``__class__``); their attributes and identities are untouched.
"""

from __future__ import annotations

import json
import os
import sys
import types
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# Code whose reads count: this directory and the ported programs it runs.
_TEST_CODE = (HERE + os.sep, os.path.join(ROOT, "examples", "jax_ports") + os.sep)

_NAMESPACE_OF: dict[str, str] = {}  # baton module name -> JAX namespace
_current_test: str | None = None
# (jax namespace, name) -> test ids (or "file:<path>" for top-level reads)
_reads: dict[tuple[str, str], set[str]] = defaultdict(set)
_outcomes: dict[str, bool | None] = {}  # test id -> passed (None: skipped)
_credited: dict[tuple[str, str], bool] = {}


def _note(module_name: str, name: str) -> None:
    frame = sys._getframe(2)
    if not frame.f_code.co_filename.startswith(_TEST_CODE):
        return
    ns = _NAMESPACE_OF.get(module_name)
    if ns is None:
        return
    who = _current_test or "file:" + frame.f_code.co_filename
    _reads[(ns, name)].add(who)


class _NotingModule(types.ModuleType):
    def __getattribute__(self, name: str):
        value = super().__getattribute__(name)
        if name[:1] != "_":
            _note(super().__getattribute__("__name__"), name)
        return value


def install(pairs: tuple[tuple[str, str], ...]) -> None:
    """Notes reads of each baton module of ``pairs`` ((jax name, baton
    name)) from now on."""
    import importlib

    for jax_name, baton_name in pairs:
        try:
            mod = importlib.import_module(baton_name)
        except ImportError:
            continue
        _NAMESPACE_OF[mod.__name__] = jax_name
        if type(mod) is types.ModuleType:
            mod.__class__ = _NotingModule


def set_current_test(test: str | None) -> None:
    """Attributes the reads from now on to ``test`` (for scripts that run
    several checks in one process outside pytest: _shard_map_cases.py)."""
    global _current_test
    _current_test = test


def reads_by_test() -> dict[str, list[list[str]]]:
    """test -> the [namespace, name] pairs it read (for such a script to hand
    back to the pytest process that ran it)."""
    out: dict[str, list[list[str]]] = defaultdict(list)
    for (ns, name), who in sorted(_reads.items()):
        for w in who:
            out[w].append([ns, name])
    return dict(out)


def note(pairs) -> None:
    """Notes [namespace, name] pairs as read by the running test (what a
    subprocess it started read: reads_by_test())."""
    if _current_test is not None:
        for ns, name in pairs:
            _reads[(ns, name)].add(_current_test)


def credit(namespace: str, names, passed: bool = True) -> None:
    """Marks ``names`` of ``namespace`` as checked (or differing) by a
    check that does not read them as attributes."""
    for n in names:
        key = (namespace, n)
        _credited[key] = _credited.get(key, True) and passed


def results() -> dict[str, dict[str, str]]:
    """namespace -> name -> "passed" / "failed"."""
    file_tests: dict[str, list[bool]] = defaultdict(list)
    for test, ok in _outcomes.items():
        file_tests[os.path.join(ROOT, test.split("::")[0])].append(ok)
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for (ns, name), who in _reads.items():
        verdicts = []
        for w in who:
            if w.startswith("file:"):
                runs = [ok for ok in file_tests.get(w[5:], []) if ok is not None]
                if runs:
                    verdicts.append(all(runs))
            elif _outcomes.get(w) is not None:
                verdicts.append(_outcomes[w])
        if verdicts:
            out[ns][name] = "passed" if all(verdicts) else "failed"
    for (ns, name), ok in _credited.items():
        if out[ns].get(name) != "failed":
            out[ns][name] = "passed" if ok else "failed"
    return {ns: dict(sorted(v.items())) for ns, v in sorted(out.items())}


class Plugin:
    """The pytest hooks: which test is running, and how each ended."""

    def __init__(self, path: str) -> None:
        self.path = path

    def pytest_runtest_setup(self, item) -> None:
        global _current_test
        _current_test = item.nodeid

    def pytest_runtest_teardown(self, item) -> None:
        global _current_test
        _current_test = item.nodeid

    def pytest_runtest_logreport(self, report) -> None:
        # A skipped (or expected-to-fail) test checks nothing.
        if report.skipped or _outcomes.get(report.nodeid, True) is None:
            if not report.failed:
                _outcomes[report.nodeid] = None
        else:
            ok = _outcomes.get(report.nodeid, True) and report.passed
            _outcomes[report.nodeid] = ok
        if report.when == "teardown":
            global _current_test
            _current_test = None

    def pytest_sessionfinish(self, session) -> None:
        with open(self.path, "w") as f:
            json.dump(results(), f, indent=1)
