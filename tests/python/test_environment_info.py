"""bt.print_environment_info(): versions, CPU, devices and the BLAS kernel,
and the check that the kernel OpenBLAS chose fits this CPU (issue 40)."""

import baton as bt
from baton import _baton


def test_environment_info_names_the_blas_kernel_and_the_cpu():
    text = bt.print_environment_info(return_string=True)
    blas = _baton.blas_info()
    assert "OpenBLAS" in blas["config"]
    assert f"blas core: {blas['corename']}" in text
    assert "cpu:" in text and blas["cpu_isa"] in text
    assert "devices:" in text and bt.devices()[0].platform in text


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
