"""bt.print_environment_info(): versions, CPU, devices and the BLAS kernel,
and the check that the kernel OpenBLAS chose fits this CPU (issue 40)."""

import os

import baton as bt
from baton import _baton


def test_environment_info_names_the_blas_kernel_and_the_cpu():
    text = bt.print_environment_info(return_string=True)
    blas = _baton.blas_info()
    assert "OpenBLAS" in blas["config"]
    assert f"blas core: {blas['corename']}" in text
    assert "cpu:" in text and blas["cpu_isa"] in text
    assert "devices:" in text and bt.devices()[0].platform in text


def test_the_cpu_pool_has_a_thread_per_core_this_process_may_use():
    # The pool is made on first use, from the mask of the thread that uses
    # it first; pytest runs everything on the main thread.
    cores = len(os.sched_getaffinity(0))
    assert _baton.cpu_pool_threads() == cores
    assert f"cpu pool:  {cores} thread(s)" in bt.print_environment_info(return_string=True)


def test_print_environment_info_prints(capsys):
    assert bt.print_environment_info() is None
    assert "blas core:" in capsys.readouterr().out


def test_the_kernel_check_knows_generic_and_modern_families():
    assert _baton.blas_kernel_isa("Prescott") == "sse"
    assert _baton.blas_kernel_isa("SkylakeX") == "avx512"
    assert _baton.blas_kernel_isa("Haswell") == "avx2"
    blas = _baton.blas_info()
    assert blas["kernel_fits_cpu"] == (blas["advice"] == "")
    assert blas["kernel_fits_cpu"], blas["advice"]


def _threads_in_a_process(env: dict) -> tuple[int, int]:
    """(threads per BLAS call, os.cpu_count's affinity share) in a fresh
    process with `env` added."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, os, baton as bt; from baton import _baton;"
        "print(json.dumps([_baton.blas_info()['threads_per_call'],"
        " len(os.sched_getaffinity(0))]))"
    )
    full = {k: v for k, v in os.environ.items()
            if k not in ("BATON_NUM_CPU_DEVICES", "OPENBLAS_NUM_THREADS")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=full, check=True,
                         capture_output=True, text=True).stdout
    return tuple(json.loads(out.strip().splitlines()[-1]))


def test_several_cpu_devices_share_the_cores_among_their_gemms():
    """backend/cpu/blas_threads.h: each device of a 4-device process gets a
    quarter of the cores per GEMM (at least one), a 1-device process all of
    them, and the user's OPENBLAS_NUM_THREADS wins."""
    one, cores = _threads_in_a_process({})
    assert one == cores
    four, _ = _threads_in_a_process({"BATON_NUM_CPU_DEVICES": "4"})
    assert four == max(1, cores // 4)
    # OpenBLAS caps its threads at the cores: ask for all of them.
    chosen, _ = _threads_in_a_process({"BATON_NUM_CPU_DEVICES": "4",
                                       "OPENBLAS_NUM_THREADS": str(cores)})
    assert chosen == cores
    text = bt.print_environment_info(return_string=True)
    assert "thread(s) per call" in text


_IDLE_CPU_AFTER_A_GEMM = """
import json, os, time
import numpy as np
import baton as bt
from baton import _baton
a = bt.device_put(np.random.default_rng(0).random((512, 512), np.float32))
f = bt.jit(lambda x: x @ x)
for _ in range(3):
    f(a).block_until_ready()
t0 = time.process_time()
time.sleep(0.3)  # every thread of this process idle but OpenBLAS's polling ones
print(json.dumps({"idle_cpu_s": time.process_time() - t0,
                  "env": {k: os.environ.get(k) for k in
                          ("OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_CORETYPE")},
                  "threads": _baton.blas_info()["threads_per_call"],
                  "corename": _baton.blas_info()["corename"],
                  "info": bt.print_environment_info(return_string=True)}))
"""


def _gemm_process(**env: str) -> dict:
    """A fresh process with `env` added to ours (less our OpenBLAS
    variables): a threaded 512² GEMM, then the CPU time the process uses in
    the 0.3 s after it, its environment after `import baton`, the kernel and
    the environment info."""
    import json
    import subprocess
    import sys

    full = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_CORETYPE",
                         "OPENBLAS_NUM_THREADS", "BATON_NUM_CPU_DEVICES")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", _IDLE_CPU_AFTER_A_GEMM], env=full,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_blas_workers_sleep_soon_after_a_gemm_and_leave_the_environment_alone():
    """python/baton/_blas_environment.py: baton's OpenBLAS is loaded with
    its workers' poll bounded to 2^17 cycles (~50 µs), so a process idle
    after a GEMM uses no CPU; OpenBLAS's own 2^28 (~0.1 s), asked for
    explicitly, keeps a worker polling through most of the same 0.3 s. The
    variables are set only while the extension loads."""
    bounded = _gemm_process()
    if bounded["threads"] < 2:
        import pytest

        pytest.skip("one BLAS thread per call: OpenBLAS starts no workers")
    assert bounded["env"] == {"OPENBLAS_THREAD_TIMEOUT": None,
                              "OPENBLAS_CORETYPE": None}  # taken out again
    assert "OPENBLAS_THREAD_TIMEOUT=17 (baton's choice)" in bounded["info"]
    assert "workers poll 2^17 cycles after a call" in bounded["info"]
    assert bounded["idle_cpu_s"] < 0.02, bounded
    # The control shows the measurement can see a polling worker.
    polling = _gemm_process(OPENBLAS_THREAD_TIMEOUT="28")
    assert polling["env"]["OPENBLAS_THREAD_TIMEOUT"] == "28"  # the user's, kept
    assert "OPENBLAS_THREAD_TIMEOUT=28 (the user)" in polling["info"]
    assert "poll 2^28 cycles" in polling["info"]
    assert polling["idle_cpu_s"] > 0.03, polling


def test_the_kernels_baton_picks_are_the_ones_openblas_runs_unless_the_user_picks():
    """On AMD family 25 with AVX-512 (Zen 4) baton loads OpenBLAS's Haswell
    kernels; elsewhere OpenBLAS's own choice stands. The user's
    OPENBLAS_CORETYPE wins everywhere."""
    from baton import _blas_environment

    ours = _gemm_process()
    chosen = _blas_environment.coretype_for(_blas_environment.cpu_fields())
    if chosen is not None:
        assert ours["corename"] == chosen
        assert f"OPENBLAS_CORETYPE={chosen} (baton's choice)" in ours["info"]
    else:
        assert "OPENBLAS_CORETYPE" not in ours["info"]
    # A kernel family this CPU runs, and on Zen 4 not baton's choice.
    flags = _blas_environment.cpu_fields().get("flags", "").split()
    pick = "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else None
    if pick is None:
        return  # no kernel to pick that OpenBLAS would not refuse here
    users = _gemm_process(OPENBLAS_CORETYPE=pick)
    assert users["corename"] == pick
    assert users["env"]["OPENBLAS_CORETYPE"] == pick
    assert f"OPENBLAS_CORETYPE={pick} (the user)" in users["info"]


def test_the_coretype_choice_is_zen_4_only():
    from baton._blas_environment import coretype_for

    zen4 = {"vendor_id": "AuthenticAMD", "cpu family": "25",
            "flags": "fpu sse avx2 avx512f avx512bw"}
    assert coretype_for(zen4) == "Haswell"
    assert coretype_for({**zen4, "flags": "fpu sse avx2"}) is None  # Zen 3
    assert coretype_for({**zen4, "cpu family": "26"}) is None  # Zen 5: not measured
    assert coretype_for({**zen4, "vendor_id": "GenuineIntel", "cpu family": "6"}) is None
    assert coretype_for({}) is None


def test_the_poll_described_follows_openblas_reading_of_the_variable():
    from baton._blas_environment import effective_log2_cycles

    assert effective_log2_cycles("17") == 17
    assert effective_log2_cycles("2") == 4  # OpenBLAS clamps to 4..30
    assert effective_log2_cycles("40") == 30
    assert effective_log2_cycles("0") == 28  # not positive: its default
    assert effective_log2_cycles("fast") == 28
