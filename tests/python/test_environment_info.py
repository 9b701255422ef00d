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
