# Defines the interface target baton_pocketfft: the include folder of
# pocketfft (Max-Planck-Society, BSD-3-Clause), the header-only C++ FFT
# library numpy and scipy use, and BATON_POCKETFFT_INCLUDE_DIR.
#
# Debian has no package for it; PyPI's pure-Python wheel pythran (pinned in
# requirements-dev.txt, installed by tools/install_deps.sh) ships the
# unmodified pocketfft_hdronly header as
# pythran/pythonic/numpy/fft/pocketfft.hpp, so it is found through the
# Python interpreter, as cmake/BatonBlas.cmake finds scipy-openblas32. The
# package is located without importing it (importlib's find_spec), so
# pythran's own Python dependencies are not needed to build baton.
#
# Only the source that calls pocketfft (backend/cpu/kernels/fft.cc) gets the
# include folder (set_source_files_properties in src/CMakeLists.txt), so the
# rest keep their ccache entries. pocketfft's own threads are compiled out
# (POCKETFFT_NO_MULTITHREADING): the kernel parallelises over independent
# transforms with baton's ThreadPool. Its plan cache stays off
# (POCKETFFT_CACHE_SIZE 0, its default): plans are built in each call, so no
# FFT memory outlives the call that made it (kernels/fft.h).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c
    "import importlib.util as u, importlib.metadata as m, os; s = u.find_spec('pythran'); print(os.path.join(s.submodule_search_locations[0], 'pythonic', 'numpy', 'fft')); print(m.version('pythran'))"
  OUTPUT_VARIABLE _pocketfft_out OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _pocketfft_status ERROR_QUIET)
if(NOT _pocketfft_status EQUAL 0)
  message(FATAL_ERROR "baton: the FFT kernel needs pocketfft's header, which baton takes from "
          "the Python package pythran; it is not installed for ${Python3_EXECUTABLE}. "
          "Run tools/install_deps.sh (it installs the pinned version from requirements-dev.txt)")
endif()
string(REPLACE "\n" ";" _pocketfft_lines "${_pocketfft_out}")
list(GET _pocketfft_lines 0 BATON_POCKETFFT_INCLUDE_DIR)
list(GET _pocketfft_lines 1 BATON_POCKETFFT_VERSION)
if(NOT EXISTS "${BATON_POCKETFFT_INCLUDE_DIR}/pocketfft.hpp")
  message(FATAL_ERROR "baton: pythran ${BATON_POCKETFFT_VERSION} has no "
          "${BATON_POCKETFFT_INCLUDE_DIR}/pocketfft.hpp; run tools/install_deps.sh "
          "(it installs the pinned version from requirements-dev.txt)")
endif()
set(BATON_POCKETFFT_DEFINITIONS "POCKETFFT_NO_MULTITHREADING")
add_library(baton_pocketfft INTERFACE)
target_include_directories(baton_pocketfft INTERFACE "${BATON_POCKETFFT_INCLUDE_DIR}")
target_compile_definitions(baton_pocketfft INTERFACE ${BATON_POCKETFFT_DEFINITIONS})
message(STATUS "baton: pocketfft from pythran ${BATON_POCKETFFT_VERSION} (${BATON_POCKETFFT_INCLUDE_DIR})")
