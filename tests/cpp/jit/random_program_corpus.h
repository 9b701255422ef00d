// The corpus of random programs that several test areas check: the jit
// tests run it on the CPU executor (jit/random_programs_test.cc), the code
// generator's tests emit it as CUDA kernels, run those under host emulation
// (codegen/emitted_random_programs_test.cc) and compile them with NVRTC
// (codegen/nvrtc_compiler_test.cc). One list, so that a program that fails
// in one area can be looked at in the others by its seed.
#pragma once

#include <cstdint>

namespace baton::testing {

// Programs kRandomProgramBaseSeed, kRandomProgramBaseSeed + 1, ... of
// ProgramGenerator (jit/random_program_generator.h).
inline constexpr int kRandomProgramCount = 4000;
inline constexpr uint64_t kRandomProgramBaseSeed = 20240611;

}  // namespace baton::testing
