// KernelEmitter: a compiled program's steps (compiler/step_plan.h) as CUDA
// C++ kernels, and the list of actions -- kernel launches, copies, library
// GEMMs -- that runs them in order.
//
// The emitted source is the device prelude (core/fast_math.h,
// device_scalars.inc and device_prelude.inc: the per-element semantics of
// every elementwise op) followed by one kernel per
// piece of work. Each kernel takes one argument, the fixed-size KernelArgs
// block of buffer pointers, and covers `threads` work items with a
// grid-stride loop; under BATON_HOST_EMULATION the same text compiles as
// host C++, each kernel an `extern "C" void name(bt::i64 threads, const
// KernelArgs*)` that loops over the items in order. NVRTC
// (nvrtc_compiler.h) compiles the source for a GPU; host_kernel_runner.h
// compiles it with the host's C++ compiler and runs the actions, which is
// how the kernels are tested on machines without a GPU, and how the
// simulated device runs programs (the GPU executable, ../gpu_executable.h).
// On a CUDA device the GPU executable loads the NVRTC build and launches
// the actions on the device's stream (../cuda_program.h).
//
// Buffers are named, not placed: an argument is a program value (a slot,
// indexed by ValueId) or an offset in the step's scratch, so the emitter
// runs before buffer assignment and reports the scratch each step needs
// (step_scratch_bytes), for a runner to place (AssignBuffers takes scratch
// per step).
//
// What is emitted (emit_*.cc, one file per family):
//  - elementwise ops and fused elementwise steps (virtual scalars, regular
//    broadcasts and table gathers inline), fused reductions;
//  - iota, convert, broadcast_in_dim, transpose, slice, dynamic_slice,
//    dynamic_update_slice, concatenate, pad, gather, scatter, reduce;
//  - dot_general: a GEMM action (cuBLAS) for the float types, reading each
//    operand as it is stored or transposed, a transpose kernel first only
//    for an operand stored in neither order; a kernel for the others;
//  - reshape and transfer: a copy (skipped at run time when source and
//    destination share storage).
// Sort, linalg, fft (pocketfft is CPU-only), host callbacks and control-flow
// regions are not emitted:
// EmitProgram returns Unimplemented naming the op.
//
// Determinism: every kernel writes each output element from exactly one work
// item, and reductions combine in a fixed order (no atomics), so a program
// gives the same bits on every run.
//
// Thread-safety: EmitProgram is a pure function of its arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/dtype.h"
#include "baton/core/status.h"

namespace baton::cuda::codegen {

// Launching a kernel: any grid and block shape covering `threads` work items
// or fewer (the grid-stride loop does the rest), with at most 2^31 threads
// in all (gridDim.x * blockDim.x <= 2^31: a kernel with 32-bit indices
// counts its loop in 32 bits).
inline constexpr int64_t kMaxThreadsPerLaunch = int64_t{1} << 31;

// Pointers one kernel takes (the KernelArgs block in the emitted source,
// passed by value: 2 KiB, within the 4 KiB of parameters every CUDA
// architecture takes). Fused chains reach past 64 buffers (random.normal's
// inverse error function reads 101), which would otherwise leave the whole
// step to the host.
inline constexpr int kMaxKernelArgs = 256;
struct KernelArgs {
  void* p[kMaxKernelArgs];
};

// A buffer an action reads or writes.
struct BufferRef {
  enum class Kind : uint8_t {
    kSlot,     // value_data[index]: a value's storage (index = ValueId)
    kScratch,  // the step's scratch + index (bytes)
  };
  Kind kind = Kind::kSlot;
  int64_t index = 0;
  bool operator==(const BufferRef&) const = default;
};

struct Action {
  // kHostStep: a step the emitter cannot put on the device, left for the
  // runner to compute on the host (only with EmitOptions::host_fallback:
  // how the emulation tests reach the device-ready steps of programs that
  // also hold sort, control flow or host callbacks).
  enum class Kind : uint8_t { kKernel, kCopy, kGemm, kHostStep };
  Kind kind = Kind::kKernel;
  int step = -1;  // the plan step it belongs to
  // kKernel: which kernel (EmittedProgram::kernel_names), over how many
  // work items, with these pointers as KernelArgs::p[0..].
  int kernel = -1;
  int64_t threads = 0;
  std::vector<BufferRef> args;
  // kCopy: bytes from src to dst (nothing when both are the same storage).
  // kGemm: row-major c[batch][m][n] = a[batch][m][k] * b[batch][k][n],
  // where a is stored as a[batch][k][m] when trans_a, and b as
  // b[batch][n][k] when trans_b (the library reads them transposed).
  BufferRef dst, src;                      // kCopy
  int64_t bytes = 0;                       // kCopy
  DType dtype = DType::kFloat32;           // kGemm
  int64_t batch = 1, m = 0, n = 0, k = 0;  // kGemm
  BufferRef a, b, c;                       // kGemm
  bool trans_a = false, trans_b = false;   // kGemm
  // kHostStep: why no kernel covers the step (the emitter's message).
  std::string host_reason;
};

struct EmitOptions {
  // Whether float dot_generals become kGemm actions (a GEMM library is
  // there: cuBLAS) or kernels (host emulation).
  bool library_gemm = true;
  // The prefix of every kernel's name ("bt_k0", "bt_k1", ...): programs
  // emitted with distinct prefixes can share one compilation
  // (CombinedSource, host_kernel_runner.h).
  std::string kernel_prefix = "bt_k";
  // Whether a step that cannot be emitted becomes a kHostStep action
  // instead of failing the whole program (tests: no device runs those).
  bool host_fallback = false;
  // Index arithmetic: 0 picks per kernel (32-bit when everything it
  // touches fits, emit_context.h); 64 forces 64-bit (tests of that path).
  int index_bits = 0;
};

struct EmittedProgram {
  std::string source;                       // prelude + every kernel
  size_t kernels_offset = 0;                // where in `source` the kernels
                                            // begin (after the prelude)
  std::vector<std::string> kernel_names;    // extern "C" names, by index
  // Where each kernel's text is in `source` (offset, length), by index.
  std::vector<std::pair<size_t, size_t>> kernel_text;
  std::vector<Action> actions;              // in program order
  std::vector<int64_t> step_scratch_bytes;  // per plan step
};

// The device prelude's text (device_prelude.inc), as every emitted source
// begins.
std::string_view DevicePrelude();

// `emitted`'s kernels as up to `parts` sources, each the prelude and some of
// the kernels (balanced by length), to compile side by side: NVRTC compiles
// one program on one thread, some milliseconds a kernel. part_of_kernel[k]
// says which source holds kernel k. Fewer sources when there are fewer
// kernels; none when there are none.
struct PartitionedSource {
  std::vector<std::string> sources;
  std::vector<int> part_of_kernel;
};
PartitionedSource Partition(const EmittedProgram& emitted, int parts);

// With $BATON_DUMP_CUDA_SOURCE set to a folder, each emitted source is also
// written there as <name>.<hash>.cu (for reading, or compiling by hand with
// nvcc -arch=sm_90 or g++ -x c++ -DBATON_HOST_EMULATION).
//
// Emits every step of `plan` (over `program`, optimized, scheduled and
// planned as the CPU backend does). `name` appears in error messages.
// Unimplemented for a step the backend cannot run (sort, linalg, host_callback,
// regions, an op with more than kMaxKernelArgs operands), naming it --
// unless options.host_fallback, which makes such a step a kHostStep action.
Result<EmittedProgram> EmitProgram(const compiler::Program& program,
                                   const compiler::StepPlan& plan,
                                   const EmitOptions& options,
                                   const std::string& name);

}  // namespace baton::cuda::codegen
