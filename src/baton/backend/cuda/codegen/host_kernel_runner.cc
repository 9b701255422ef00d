// Emitted kernels compiled and run on the host (host_kernel_runner.h).
#include "baton/backend/cuda/codegen/host_kernel_runner.h"

#include <dlfcn.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "baton/backend/cuda/codegen/host_gemm.h"

#ifndef BATON_HOST_CXX_DEFAULT
#define BATON_HOST_CXX_DEFAULT "c++"
#endif

namespace baton::cuda::codegen {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

fs::path CacheDir() {
  const std::string set = Env("BATON_HOST_KERNEL_CACHE", "");
  if (!set.empty()) return set;
  return fs::path(Env("TMPDIR", "/tmp")) /
         ("baton-host-kernels-" + std::to_string(getuid()));
}

// Runs `command`; its exit status, with what it printed in `output`.
int RunCommand(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char chunk[4096];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) {
    output->append(chunk, n);
  }
  return pclose(pipe);
}

// In an AddressSanitizer build the emulated kernels are instrumented too,
// with line tables: an index out of a buffer's bounds stops at the
// generated line that made it (the file stays in the cache folder).
#if defined(__SANITIZE_ADDRESS__)
#define BATON_HOST_KERNELS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BATON_HOST_KERNELS_ASAN 1
#endif
#endif
#ifdef BATON_HOST_KERNELS_ASAN
constexpr char kSanitizerFlags[] = " -fsanitize=address -g";
#else
constexpr char kSanitizerFlags[] = "";
#endif

// The device prelude as a header with its precompiled form beside it
// (<header>.gch) in `dir`, built once per compiler and flags: compiling
// the prelude is most of the time of a small program's compile (0.18 s ->
// 0.07 s). Empty when it cannot be built (a compiler without GCC's
// precompiled headers): the caller compiles the whole source. A stale or
// foreign .gch is harmless -- the compiler then reads the header's text.
fs::path PrecompiledPrelude(const fs::path& dir, const std::string& compiler,
                            const std::string& compile_flags,
                            const std::string& unique) {
  const std::string_view prelude = DevicePrelude();
  const std::string key = compiler + " " + compile_flags;
  const uint64_t hash = XXH3_64bits_withSeed(
      prelude.data(), prelude.size(), XXH3_64bits(key.data(), key.size()));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash));
  const fs::path header = dir / ("prelude-" + std::string(hex) + ".h");
  const fs::path pch = dir / ("prelude-" + std::string(hex) + ".h.gch");
  std::error_code ec;
  if (fs::exists(pch, ec)) return header;
  static std::atomic<bool> unavailable{false};
  if (unavailable.load()) return {};
  // Written under unique names and renamed into place: racing builders
  // (threads, processes) agree on the same bytes.
  const fs::path header_part = dir / ("prelude-" + std::string(hex) + unique + ".h");
  {
    std::ofstream out(header_part, std::ios::binary);
    out.write(prelude.data(), static_cast<std::streamsize>(prelude.size()));
    if (!out) return {};
  }
  fs::rename(header_part, header, ec);
  if (ec) return {};
  const fs::path pch_part = dir / ("prelude-" + std::string(hex) + unique + ".gch");
  std::string log;
  const int rc = RunCommand(compiler + " " + compile_flags +
                                " -x c++-header '" + header.string() +
                                "' -o '" + pch_part.string() + "'",
                            &log);
  if (rc != 0 || !fs::exists(pch_part, ec)) {
    fs::remove(pch_part, ec);
    unavailable.store(true);
    return {};
  }
  fs::rename(pch_part, pch, ec);
  if (ec) return {};
  return header;
}

// Compiles `source` into the cache unless it is there; the library's path.
Result<fs::path> CompileIntoCache(const std::string& source,
                                  const std::string& name, bool optimize) {
  const std::string compiler = Env("BATON_HOST_CXX", BATON_HOST_CXX_DEFAULT);
  // No FMA contraction and IEEE math, as the CPU backend (-ffp-contract=off)
  // and the NVRTC build (--fmad=false) compute. -O0: the kernels are many
  // and run on small data, so compile time is nearly all of the tests'
  // time (the 4,000 random programs: 26 s at -O0, 61 s at -O1, and their
  // run under a second either way); on x86-64 the float results are the
  // same at every level (SSE, no contraction).
  // An executable's kernels run on real data: -O2 (HostKernelLibrary::
  // Optimization), a few percent more compile time for kernels many times
  // faster.
  const std::string compile_flags =
      std::string("-std=c++17 ") + (optimize ? "-O2" : "-O0") +
      " -fPIC -w -DBATON_HOST_EMULATION -ffp-contract=off -fno-fast-math" +
      std::string(kSanitizerFlags);
  const std::string command_key =
      compiler + " " + compile_flags + " -shared -x c++";
  const uint64_t hash =
      XXH3_64bits_withSeed(source.data(), source.size(),
                           XXH3_64bits(command_key.data(), command_key.size()));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash));
  const fs::path dir = CacheDir();
  const fs::path library = dir / (std::string(hex) + ".so");
  std::error_code ec;
  if (fs::exists(library, ec)) return library;
  fs::create_directories(dir, ec);
  if (ec) {
    return Internal(name + ": cannot create the host kernel cache " +
                    dir.string() + ": " + ec.message() +
                    " (set BATON_HOST_KERNEL_CACHE to a writable folder)");
  }
  static std::atomic<uint64_t> counter{0};
  const std::string unique = "." + std::to_string(getpid()) + "." +
                             std::to_string(counter.fetch_add(1));
  const fs::path source_path = dir / (std::string(hex) + unique + ".cc");
  const fs::path partial = dir / (std::string(hex) + unique + ".so");
  // The prelude, nearly all of every source, from its precompiled header
  // when there is one: the kernels alone are compiled.
  const std::string_view prelude = DevicePrelude();
  std::string include;
  size_t body_at = 0;
  if (source.compare(0, prelude.size(), prelude) == 0) {
    const fs::path header =
        PrecompiledPrelude(dir, compiler, compile_flags, unique);
    if (!header.empty()) {
      include = " -include '" + header.string() + "'";
      body_at = prelude.size();
    }
  }
  {
    std::ofstream out(source_path, std::ios::binary);
    out.write(source.data() + body_at,
              static_cast<std::streamsize>(source.size() - body_at));
    if (!out) return Internal(name + ": cannot write " + source_path.string());
  }
  std::string log;
  const int rc = RunCommand(compiler + " " + compile_flags + " -shared" +
                                include + " -x c++ '" + source_path.string() +
                                "' -o '" + partial.string() + "'",
                            &log);
  if (rc != 0) {
    // The source is kept for the report; the partial output is not.
    fs::remove(partial, ec);
    return Internal(name + ": the host compiler (" + compiler +
                    ") rejected the emitted kernels (" + source_path.string() +
                    "), exit status " + std::to_string(rc) + ":\n" + log);
  }
#ifndef BATON_HOST_KERNELS_ASAN
  fs::remove(source_path, ec);  // kept under ASan: its reports point into it
#endif
  fs::rename(partial, library, ec);  // atomic: racing compiles agree
  if (ec) {
    return Internal(name + ": cannot move " + partial.string() +
                    " into place: " + ec.message());
  }
  return library;
}

}  // namespace

Result<std::unique_ptr<HostKernelLibrary>> HostKernelLibrary::Compile(
    const std::string& source, const std::string& name,
    Optimization optimization) {
  BATON_ASSIGN_OR_RETURN(
      fs::path path,
      CompileIntoCache(source, name,
                       optimization == Optimization::kFastRun &&
                           Env("BATON_HOST_KERNEL_OPTIMIZE", "1") != "0"));
  std::unique_ptr<HostKernelLibrary> lib(new HostKernelLibrary());
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    return Internal(name + ": cannot load " + path.string() + ": " + dlerror());
  }
  return lib;
}

HostKernelLibrary::~HostKernelLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<HostKernel> HostKernelLibrary::Find(const std::string& kernel) const {
  void* fn = dlsym(handle_, kernel.c_str());
  if (fn == nullptr) {
    return Internal("host kernel library has no kernel " + kernel);
  }
  return reinterpret_cast<HostKernel>(fn);
}

std::string CombinedSource(const std::vector<const EmittedProgram*>& programs) {
  if (programs.empty()) return "";
  std::string source = programs[0]->source;
  for (size_t i = 1; i < programs.size(); ++i) {
    const EmittedProgram& p = *programs[i];
    source.append(p.source, p.kernels_offset, std::string::npos);
  }
  return source;
}

Status RunOnHost(const HostKernelLibrary* library,
                 const EmittedProgram& emitted,
                 const std::vector<void*>& value_data,
                 const std::vector<void*>& step_scratch,
                 const HostStepRunner& host_step) {
  auto at = [&](const BufferRef& ref, int step) -> void* {
    if (ref.kind == BufferRef::Kind::kSlot) {
      return value_data[static_cast<size_t>(ref.index)];
    }
    return static_cast<char*>(step_scratch[static_cast<size_t>(step)]) +
           ref.index;
  };
  for (const Action& action : emitted.actions) {
    switch (action.kind) {
      case Action::Kind::kKernel: {
        if (library == nullptr) {
          return Internal("a kernel launch without a kernel library");
        }
        BATON_ASSIGN_OR_RETURN(
            HostKernel fn,
            library->Find(
                emitted.kernel_names[static_cast<size_t>(action.kernel)]));
        KernelArgs args{};
        for (size_t k = 0; k < action.args.size(); ++k) {
          args.p[k] = at(action.args[k], action.step);
        }
        fn(action.threads, &args);
        break;
      }
      case Action::Kind::kCopy: {
        void* dst = at(action.dst, action.step);
        const void* src = at(action.src, action.step);
        if (dst != src) {
          std::memmove(dst, src, static_cast<size_t>(action.bytes));
        }
        break;
      }
      case Action::Kind::kGemm:
        BATON_RETURN_IF_ERROR(RunGemmOnHost(action, at(action.a, action.step),
                                            at(action.b, action.step),
                                            at(action.c, action.step)));
        break;
      case Action::Kind::kHostStep:
        if (host_step == nullptr) {
          return Unimplemented("step " + std::to_string(action.step) +
                               " was left to the host, and no host step "
                               "runner was given");
        }
        BATON_RETURN_IF_ERROR(host_step(action.step));
        break;
    }
  }
  return OkStatus();
}

}  // namespace baton::cuda::codegen
