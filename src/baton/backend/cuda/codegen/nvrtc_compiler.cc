// NVRTC, loaded with dlopen on first use (nvrtc_compiler.h).
#include "baton/backend/cuda/codegen/nvrtc_compiler.h"

#include <dlfcn.h>
#include <xxhash.h>

#include <cstddef>
#include <map>
#include <mutex>

namespace baton::cuda {
namespace {

// NVRTC's C ABI (nvrtc.h), declared here so that no CUDA header is needed.
using nvrtcResult = int;  // an enum; NVRTC_SUCCESS is 0
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult kNvrtcSuccess = 0;
constexpr nvrtcResult kNvrtcErrorOutOfMemory = 1;
constexpr nvrtcResult kNvrtcErrorInvalidOption = 5;
constexpr nvrtcResult kNvrtcErrorCompilation = 6;

using VersionFn = nvrtcResult (*)(int*, int*);
using CreateProgramFn = nvrtcResult (*)(nvrtcProgram*, const char*, const char*,
                                        int, const char* const*,
                                        const char* const*);
using CompileProgramFn = nvrtcResult (*)(nvrtcProgram, int, const char* const*);
using GetSizeFn = nvrtcResult (*)(nvrtcProgram, size_t*);
using GetTextFn = nvrtcResult (*)(nvrtcProgram, char*);
using DestroyProgramFn = nvrtcResult (*)(nvrtcProgram*);
using GetErrorStringFn = const char* (*)(nvrtcResult);

// What loading found; never destroyed (the library is never dlclose'd).
struct Nvrtc {
  std::string unavailable_reason;  // "" when every entry point resolved
  VersionFn version = nullptr;
  CreateProgramFn create_program = nullptr;
  CompileProgramFn compile_program = nullptr;
  GetSizeFn get_program_log_size = nullptr;
  GetTextFn get_program_log = nullptr;
  GetSizeFn get_ptx_size = nullptr;
  GetTextFn get_ptx = nullptr;
  GetSizeFn get_cubin_size = nullptr;
  GetTextFn get_cubin = nullptr;
  DestroyProgramFn destroy_program = nullptr;
  GetErrorStringFn get_error_string = nullptr;
};

std::vector<std::string> CandidateNames() {
  std::vector<std::string> names;
#ifdef BATON_CUDA_LIB_DIR
  names.push_back(std::string(BATON_CUDA_LIB_DIR) + "/libnvrtc.so.13");
  names.push_back(std::string(BATON_CUDA_LIB_DIR) + "/libnvrtc.so.12");
#endif
  names.insert(names.end(),
               {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"});
  return names;
}

template <typename Fn>
bool Resolve(void* library, const char* symbol, Fn* fn, std::string* missing) {
  *fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (*fn == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
  }
  return *fn != nullptr;
}

const Nvrtc* Load() {
  auto* n = new Nvrtc;
  const std::vector<std::string> names = CandidateNames();
  void* library = nullptr;
  std::string loaded;
  std::string last_error;
  for (const std::string& name : names) {
    library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) {
      loaded = name;
      break;
    }
    const char* error = dlerror();
    last_error = error != nullptr ? error : "unknown dlopen error";
  }
  if (library == nullptr) {
    std::string tried;
    for (const std::string& name : names) {
      tried += (tried.empty() ? "" : ", ") + name;
    }
    n->unavailable_reason =
        "NVRTC (the CUDA runtime compiler) could not be loaded: dlopen "
        "failed for each of " +
        tried + " (last error: " + last_error +
        "); install the CUDA toolkit's NVRTC or add its lib directory to "
        "LD_LIBRARY_PATH";
    return n;
  }
  std::string missing;
  Resolve(library, "nvrtcVersion", &n->version, &missing);
  Resolve(library, "nvrtcCreateProgram", &n->create_program, &missing);
  Resolve(library, "nvrtcCompileProgram", &n->compile_program, &missing);
  Resolve(library, "nvrtcGetProgramLogSize", &n->get_program_log_size,
          &missing);
  Resolve(library, "nvrtcGetProgramLog", &n->get_program_log, &missing);
  Resolve(library, "nvrtcGetPTXSize", &n->get_ptx_size, &missing);
  Resolve(library, "nvrtcGetPTX", &n->get_ptx, &missing);
  Resolve(library, "nvrtcGetCUBINSize", &n->get_cubin_size, &missing);
  Resolve(library, "nvrtcGetCUBIN", &n->get_cubin, &missing);
  Resolve(library, "nvrtcDestroyProgram", &n->destroy_program, &missing);
  Resolve(library, "nvrtcGetErrorString", &n->get_error_string, &missing);
  if (!missing.empty()) {
    n->unavailable_reason = "NVRTC loaded from " + loaded +
                            " lacks the entry points " + missing +
                            "; install NVRTC 12 or 13 from a CUDA toolkit";
  }
  return n;
}

// Thread-safe: a function-local static is initialized exactly once.
const Nvrtc& GetNvrtc() {
  static const Nvrtc* nvrtc = Load();
  return *nvrtc;
}

// FailedPrecondition for `doing` ("compile kernel program 'k.cu'").
Status Unavailable(const Nvrtc& n, const std::string& doing) {
  return FailedPrecondition("NVRTC: cannot " + doing + ": " +
                            n.unavailable_reason);
}

// "NVRTC_ERROR_COMPILATION (6)".
std::string ErrorText(const Nvrtc& n, nvrtcResult result) {
  const char* text = n.get_error_string(result);
  return std::string(text != nullptr ? text : "unknown NVRTC error") + " (" +
         std::to_string(result) + ")";
}

// The Status for `call` failing with `result` on program `name`.
Status NvrtcError(const Nvrtc& n, nvrtcResult result, const char* call,
                  const std::string& name, const std::string& log = "") {
  std::string message = "NVRTC: " + std::string(call) +
                        " failed for kernel "
                        "program '" +
                        name + "': " + ErrorText(n, result);
  if (!log.empty()) message += "; compile log:\n" + log;
  switch (result) {
    case kNvrtcErrorOutOfMemory:
      return ResourceExhausted(std::move(message));
    case kNvrtcErrorCompilation:
    case kNvrtcErrorInvalidOption:
      return InvalidArgument(std::move(message));
    default:
      return Internal(std::move(message));
  }
}

// The program's compile log ("" when there is none or it cannot be read).
std::string ProgramLog(const Nvrtc& n, nvrtcProgram program) {
  size_t size = 0;
  if (n.get_program_log_size(program, &size) != kNvrtcSuccess || size <= 1) {
    return "";
  }
  std::string log(size, '\0');
  if (n.get_program_log(program, log.data()) != kNvrtcSuccess) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  return log;
}

// Destroys the program when the compilation is done with it.
class ProgramGuard {
 public:
  ProgramGuard(const Nvrtc& n, nvrtcProgram program)
      : n_(n), program_(program) {}
  ~ProgramGuard() { (void)n_.destroy_program(&program_); }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  const Nvrtc& n_;
  nvrtcProgram program_;
};

// Compiled PTX and CUBIN by a 128-bit hash of source, architecture, options
// and output kind: a program compiled again (another executable of the same
// computation, a test run twice) costs a lookup. Never evicted.
class PtxCache {
 public:
  static PtxCache& Get() {
    static PtxCache* cache = new PtxCache;  // never destroyed
    return *cache;
  }
  static XXH128_hash_t Key(const std::string& source,
                           const std::vector<std::string>& options) {
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    XXH3_128bits_update(state, source.data(), source.size());
    for (const std::string& option : options) {
      XXH3_128bits_update(state, "\0", 1);
      XXH3_128bits_update(state, option.data(), option.size());
    }
    const XXH128_hash_t key = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    return key;
  }
  bool Find(const XXH128_hash_t& key, std::string* ptx) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find({key.high64, key.low64});
    if (it == map_.end()) return false;
    *ptx = it->second;
    return true;
  }
  void Put(const XXH128_hash_t& key, const std::string& ptx) {
    std::lock_guard<std::mutex> lock(mu_);
    map_.emplace(std::make_pair(key.high64, key.low64), ptx);
  }

 private:
  std::mutex mu_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> map_;
};

}  // namespace

const std::string& NvrtcUnavailableReason() {
  return GetNvrtc().unavailable_reason;
}

Result<std::pair<int, int>> NvrtcVersion() {
  const Nvrtc& n = GetNvrtc();
  if (!n.unavailable_reason.empty()) {
    return Unavailable(n, "read its version");
  }
  int major = 0;
  int minor = 0;
  const nvrtcResult result = n.version(&major, &minor);
  if (result != kNvrtcSuccess) {
    return Internal("NVRTC: nvrtcVersion failed: " + ErrorText(n, result));
  }
  return std::make_pair(major, minor);
}

namespace {

// CompileToPtx (cubin false) or CompileToCubin (cubin true).
Result<std::string> Compile(const std::string& source, const std::string& name,
                            const std::string& arch,
                            const std::vector<std::string>& extra_options,
                            bool cubin) {
  const Nvrtc& n = GetNvrtc();
  if (!n.unavailable_reason.empty()) {
    return Unavailable(n, "compile kernel program '" + name + "'");
  }
  std::vector<std::string> options = {"--gpu-architecture=" + arch,
                                      "-std=c++17", "--fmad=false",
                                      "-default-device"};
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  // The output kind is part of the key: PTX and CUBIN differ for one arch.
  std::vector<std::string> key_parts = options;
  key_parts.push_back(cubin ? "cubin" : "ptx");
  const XXH128_hash_t key = PtxCache::Key(source, key_parts);
  if (std::string out; PtxCache::Get().Find(key, &out)) return out;

  nvrtcProgram program = nullptr;
  nvrtcResult result = n.create_program(&program, source.c_str(), name.c_str(),
                                        0, nullptr, nullptr);
  if (result != kNvrtcSuccess) {
    return NvrtcError(n, result, "nvrtcCreateProgram", name);
  }
  ProgramGuard guard(n, program);

  std::vector<const char*> option_ptrs;
  option_ptrs.reserve(options.size());
  for (const std::string& option : options) {
    option_ptrs.push_back(option.c_str());
  }
  result = n.compile_program(program, static_cast<int>(option_ptrs.size()),
                             option_ptrs.data());
  if (result != kNvrtcSuccess) {
    std::string log = ProgramLog(n, program);
    if (result == kNvrtcErrorInvalidOption || log.empty()) {
      std::string shown;
      for (const std::string& option : options) shown += " " + option;
      if (!log.empty()) log += '\n';
      log.append("(options:").append(shown).append(")");
    }
    return NvrtcError(n, result, "nvrtcCompileProgram", name, log);
  }

  size_t size = 0;
  result =
      cubin ? n.get_cubin_size(program, &size) : n.get_ptx_size(program, &size);
  if (result != kNvrtcSuccess) {
    return NvrtcError(n, result,
                      cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize", name);
  }
  std::string out(size, '\0');
  result =
      cubin ? n.get_cubin(program, out.data()) : n.get_ptx(program, out.data());
  if (result != kNvrtcSuccess) {
    return NvrtcError(n, result, cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", name);
  }
  // PTX's size counts its terminating NUL.
  if (!cubin) {
    while (!out.empty() && out.back() == '\0') out.pop_back();
  }
  PtxCache::Get().Put(key, out);
  return out;
}

}  // namespace

Result<std::string> CompileToPtx(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options) {
  return Compile(source, name, arch, extra_options, /*cubin=*/false);
}

Result<std::string> CompileToCubin(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options) {
  return Compile(source, name, arch, extra_options, /*cubin=*/true);
}

}  // namespace baton::cuda
