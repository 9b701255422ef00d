// NVRTC, loaded at run time: CUDA C++ kernel source -> PTX or CUBIN.
//
// The CUDA code generator (kernel_emitter.h) emits CUDA C++ (the device
// prelude plus the kernels); this compiles it with NVRTC, dlopen'ed on
// first use instead of linked, so baton has no link-time or loader-path
// dependency on it: a machine without NVRTC gets an error that says so, not a
// binary that fails to start. The names tried, in order: the toolkit's
// ${BATON_CUDA_LIB_DIR}/libnvrtc.so.13 and .so.12 (when CMake defines
// BATON_CUDA_LIB_DIR), then libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so
// on the loader's path. No CUDA header is needed: the few NVRTC entry points
// are declared by hand (plain C ABI).
//
// Compiled results are cached in memory and on disk (NvrtcCompiler), and a
// CUBIN comes with ptxas's resource report (registers, stack, spills) per
// function.
//
// Ownership: the library, once loaded, stays loaded for the process.
// Thread-safety: every function may be called from any thread; the library
// is loaded exactly once, and NVRTC programs are independent, so concurrent
// compilations are safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/core/status.h"

namespace baton::cuda {

// "" when NVRTC is loaded, else one sentence saying which libraries were
// tried, why loading failed (dlerror) and what to do.
const std::string& NvrtcUnavailableReason();

// NVRTC's (major, minor) version, e.g. (13, 0). FailedPrecondition with
// NvrtcUnavailableReason() when NVRTC is not loaded.
Result<std::pair<int, int>> NvrtcVersion();

// What ptxas reports for one function of a CUBIN compilation (NVRTC passes
// it --verbose; the report is in the program log).
struct KernelResources {
  std::string name;    // the function's (mangled, or extern "C") name
  bool entry = false;  // a __global__ kernel; else a non-inlined function
  int registers = -1;  // per thread; -1 where ptxas printed no count
  int64_t stack_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
};

// The functions of a ptxas --verbose report, in the order it names them:
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas info    : Function properties for k
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, ...
//   ptxas info    : Used 10 registers, used 0 barriers
// Lines it does not know are skipped. A pure function.
std::vector<KernelResources> ParsePtxasReport(std::string_view log);

// A CUBIN with ptxas's report on its functions.
struct CompiledCubin {
  std::string cubin;  // the ELF image's bytes
  std::vector<KernelResources> resources;
};

// Compiles CUDA C++ with NVRTC, caching the results in memory and, when a
// cache folder is set, on disk.
//
// The options are always --gpu-architecture=<arch>, -std=c++17,
// --fmad=false (a*b+c is never contracted into an FMA: the CPU backend
// builds with -ffp-contract=off) and -default-device, then the caller's
// extra options; CUBIN compilations add --ptxas-options=--verbose.
// The cache key is a 128-bit hash of the source, NVRTC's version, the
// options (the architecture among them) and the output kind. On disk each
// result is one file, <cache_dir>/<key>.{ptx,cubin}, written to a unique
// temporary file in that folder and renamed into place (atomic: racing
// processes agree); a file that is short, corrupt or of another format is
// ignored and rewritten. Failing to create the folder or write a file is
// not an error: the result is still returned, with one warning on stderr per
// compiler object.
//
// A source that does not compile is InvalidArgument, with NVRTC's error and
// its full log in the message; FailedPrecondition when NVRTC is not loaded.
//
// Ownership: an object owns its memory cache (never evicted); files on disk
// outlive it. Thread-safety: every method may be called from any thread. Two
// threads compiling the same uncached source may both run NVRTC.
class NvrtcCompiler {
 public:
  struct Options {
    // The folder of the disk cache; "" for none.
    std::string cache_dir;
  };

  // $BATON_CUDA_CACHE_DIR when set ("" when it is set to ""), else
  // ${XDG_CACHE_HOME:-$HOME/.cache}/baton/cuda ("" without HOME).
  static std::string DefaultCacheDir();

  // The process's compiler, cached on disk in DefaultCacheDir() (read once).
  // Never destroyed.
  static NvrtcCompiler& Default();

  explicit NvrtcCompiler(Options options);
  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  // To PTX for the virtual architecture `arch` ("compute_90"); `name` names
  // the program in NVRTC's diagnostics and in errors.
  Result<std::string> CompileToPtx(
      const std::string& source, const std::string& name,
      const std::string& arch,
      const std::vector<std::string>& extra_options = {});

  // To machine code for the real architecture `arch` ("sm_90"): NVRTC runs
  // ptxas too, so register and resource limits of that GPU are checked,
  // without one, and its report comes back with the CUBIN.
  Result<CompiledCubin> CompileToCubin(
      const std::string& source, const std::string& name,
      const std::string& arch,
      const std::vector<std::string>& extra_options = {});

  // Several sources at once, each on a thread of its own (at most
  // `threads`; 0: the machine's cores), results in order: how one
  // executable's kernels (codegen::Partition) compile in parallel. The
  // first failure is returned.
  Result<std::vector<CompiledCubin>> CompileToCubins(
      const std::vector<std::string>& sources, const std::string& name,
      const std::string& arch, int threads = 0,
      const std::vector<std::string>& extra_options = {});

  const std::string& cache_dir() const { return options_.cache_dir; }
  // NVRTC compilations this object ran (not counting cache hits, counting
  // failed ones).
  int64_t compiles() const { return compiles_.load(); }
  // Results this object read from the disk cache.
  int64_t disk_hits() const { return disk_hits_.load(); }
  // Forgets the memory cache (the disk cache stays).
  void ClearMemoryCache();

 private:
  struct Entry {
    std::string code;  // PTX text or CUBIN bytes
    std::string log;   // NVRTC's log (ptxas's report for a CUBIN)
  };
  Result<Entry> Compile(const std::string& source, const std::string& name,
                        const std::string& arch,
                        const std::vector<std::string>& extra_options,
                        bool cubin);
  bool ReadDisk(const std::string& path, Entry* entry) const;
  void WriteDisk(const std::string& path, const Entry& entry);

  const Options options_;
  std::atomic<int64_t> compiles_{0};
  std::atomic<int64_t> disk_hits_{0};
  std::atomic<bool> warned_{false};
  std::mutex mu_;
  std::map<std::pair<uint64_t, uint64_t>, Entry> memory_;  // guarded by mu_
};

// NvrtcCompiler::Default().CompileToPtx.
Result<std::string> CompileToPtx(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options = {});

// NvrtcCompiler::Default().CompileToCubin, the CUBIN's bytes only.
Result<std::string> CompileToCubin(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options = {});

}  // namespace baton::cuda
