# Defines the interface target baton_blas: the BLAS/LAPACK library baton
# links, its headers and BATON_BLAS_PREFIX (the prefix of its symbols, which
# src/baton/core/blas_symbols.h puts in front of every routine name).
#
#   BATON_BLAS=scipy-openblas (default): the OpenBLAS of the scipy-openblas32
#     wheel (tools/install_deps.sh installs the pinned version), found through
#     the Python interpreter. Its symbols carry the prefix scipy_, so it never
#     clashes with another OpenBLAS in the same process (numpy's, scipy's).
#   BATON_BLAS=system: pkg-config's openblas (Debian's libopenblas-dev).
#
# Only the sources that call BLAS/LAPACK get the include folder and the
# prefix (set_source_files_properties in src/CMakeLists.txt), so changing
# the library recompiles two files, and the rest keep their ccache entries.
set(BATON_BLAS "scipy-openblas" CACHE STRING "BLAS/LAPACK: scipy-openblas (PyPI's current OpenBLAS) or system (pkg-config openblas)")
set_property(CACHE BATON_BLAS PROPERTY STRINGS scipy-openblas system)
add_library(baton_blas INTERFACE)
# Programs that call the BLAS themselves (benchmarks, dot_test) link
# baton_blas and get its headers and prefix; the baton library links it only
# (src/CMakeLists.txt).
if(BATON_BLAS STREQUAL "scipy-openblas")
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
      "import scipy_openblas32 as s; print(s.get_include_dir()); print(s.get_lib_dir()); print(s.__version__)"
    OUTPUT_VARIABLE _blas_out OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _blas_status ERROR_QUIET)
  if(NOT _blas_status EQUAL 0)
    message(FATAL_ERROR "BATON_BLAS=scipy-openblas: the Python package scipy-openblas32 "
            "is not importable by ${Python3_EXECUTABLE}; run tools/install_deps.sh "
            "(it installs the pinned version), or configure with -DBATON_BLAS=system "
            "to use the system's OpenBLAS")
  endif()
  string(REPLACE "\n" ";" _blas_lines "${_blas_out}")
  list(GET _blas_lines 0 BATON_BLAS_INCLUDE_DIR)
  list(GET _blas_lines 1 BATON_BLAS_LIB_DIR)
  list(GET _blas_lines 2 BATON_BLAS_VERSION)
  find_library(BATON_BLAS_LIBRARY scipy_openblas PATHS "${BATON_BLAS_LIB_DIR}" NO_DEFAULT_PATH REQUIRED)
  set(BATON_BLAS_DEFINITIONS "BATON_BLAS_PREFIX=scipy_")
  target_link_libraries(baton_blas INTERFACE "${BATON_BLAS_LIBRARY}")
  target_compile_definitions(baton_blas INTERFACE ${BATON_BLAS_DEFINITIONS})
  # Programs find the library where the wheel put it.
  target_link_options(baton_blas INTERFACE "LINKER:-rpath,${BATON_BLAS_LIB_DIR}")
  message(STATUS "baton: BLAS/LAPACK from scipy-openblas32 ${BATON_BLAS_VERSION} (${BATON_BLAS_LIBRARY})")
elseif(BATON_BLAS STREQUAL "system")
  pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
  set(BATON_BLAS_INCLUDE_DIR "${OPENBLAS_INCLUDE_DIRS}")
  set(BATON_BLAS_DEFINITIONS "")
  target_link_libraries(baton_blas INTERFACE PkgConfig::OPENBLAS)
  message(STATUS "baton: BLAS/LAPACK from the system's OpenBLAS ${OPENBLAS_VERSION}")
else()
  message(FATAL_ERROR "BATON_BLAS must be scipy-openblas or system, not '${BATON_BLAS}'")
endif()
target_include_directories(baton_blas INTERFACE ${BATON_BLAS_INCLUDE_DIR})
