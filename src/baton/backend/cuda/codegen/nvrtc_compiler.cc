// NVRTC, loaded with dlopen on first use (nvrtc_compiler.h).
#include "baton/backend/cuda/codegen/nvrtc_compiler.h"

#include "baton/backend/cuda/codegen/toolkit_library.h"

#include <dlfcn.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

const Nvrtc* Load() {
  auto* n = new Nvrtc;
  const ToolkitLibrary lib = OpenToolkitLibrary("nvrtc");
  void* library = lib.handle;
  const std::string& loaded = lib.loaded;
  if (library == nullptr) {
    n->unavailable_reason =
        "NVRTC (the CUDA runtime compiler) could not be loaded: dlopen "
        "failed for each of " +
        lib.tried + " (last error: " + lib.last_error +
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

// The cache key: a 128-bit hash of the source, NVRTC's version and the
// option strings (each after a NUL, so option boundaries count).
XXH128_hash_t CacheKey(const std::string& source, int major, int minor,
                       const std::vector<std::string>& options) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, source.data(), source.size());
  const std::string version =
      "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
  XXH3_128bits_update(state, "\0", 1);
  XXH3_128bits_update(state, version.data(), version.size());
  for (const std::string& option : options) {
    XXH3_128bits_update(state, "\0", 1);
    XXH3_128bits_update(state, option.data(), option.size());
  }
  const XXH128_hash_t key = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return key;
}

// A cache file: this magic (the format's version in its last byte), the
// code's and the log's sizes (8 bytes each, little-endian as the host), the
// code, the log, then an XXH64 of everything before it.
constexpr char kFileMagic[8] = {'B', 'T', 'N', 'V', 'R', 'T', 'C', '1'};
constexpr size_t kFileHeader = sizeof kFileMagic + 2 * sizeof(uint64_t);

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

// The first integer after `key` in `line` ("Used 10 registers": key
// "Used "), or -1.
int64_t NumberAfter(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return -1;
  size_t i = at + key.size();
  if (i >= line.size() || line[i] < '0' || line[i] > '9') return -1;
  int64_t value = 0;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) {
    value = value * 10 + (line[i] - '0');
  }
  return value;
}

// The integer just before `suffix` in `line` ("0 bytes stack frame"), or -1.
int64_t NumberBefore(std::string_view line, std::string_view suffix) {
  const size_t at = line.find(suffix);
  if (at == std::string_view::npos || at == 0) return -1;
  size_t begin = at;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') {
    --begin;
  }
  if (begin == at) return -1;
  int64_t value = 0;
  for (size_t i = begin; i < at; ++i) value = value * 10 + (line[i] - '0');
  return value;
}

std::string Hex(const XXH128_hash_t& key) {
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx",
                static_cast<unsigned long long>(key.high64),
                static_cast<unsigned long long>(key.low64));
  return hex;
}

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

}  // namespace

std::vector<KernelResources> ParsePtxasReport(std::string_view log) {
  std::vector<KernelResources> out;
  // Find-or-add by name: a function is named by "Compiling entry function"
  // (entries only) and by "Function properties for" (every function).
  auto at = [&out](std::string_view name) -> KernelResources& {
    for (KernelResources& r : out) {
      if (r.name == name) return r;
    }
    out.push_back(KernelResources{std::string(name)});
    return out.back();
  };
  int entry = -1;       // the entry function "Used N registers" is about
  int properties = -1;  // the function the stack/spill line is about
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = log.find('\n', begin);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = log.substr(begin, end - begin);
    begin = end + 1;
    if (line.substr(0, 5) != "ptxas") continue;
    constexpr std::string_view kEntry = "Compiling entry function '";
    constexpr std::string_view kProperties = "Function properties for ";
    if (size_t i = line.find(kEntry); i != std::string_view::npos) {
      const std::string_view rest = line.substr(i + kEntry.size());
      KernelResources& r = at(rest.substr(0, rest.find('\'')));
      r.entry = true;
      entry = static_cast<int>(&r - out.data());
    } else if (size_t j = line.find(kProperties); j != std::string_view::npos) {
      std::string_view name = line.substr(j + kProperties.size());
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) {
        name.remove_suffix(1);
      }
      properties = static_cast<int>(&at(name) - out.data());
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      if (properties < 0) continue;
      KernelResources& r = out[properties];
      r.stack_bytes = std::max<int64_t>(0, NumberBefore(line, " bytes stack"));
      r.spill_store_bytes =
          std::max<int64_t>(0, NumberBefore(line, " bytes spill stores"));
      r.spill_load_bytes =
          std::max<int64_t>(0, NumberBefore(line, " bytes spill loads"));
    } else if (const int64_t registers = NumberAfter(line, "Used ");
               registers >= 0 &&
               line.find(" registers") != std::string_view::npos) {
      if (entry >= 0) out[entry].registers = static_cast<int>(registers);
    }
  }
  return out;
}

std::string NvrtcCompiler::DefaultCacheDir() {
  if (const char* set = std::getenv("BATON_CUDA_CACHE_DIR"); set != nullptr) {
    return set;
  }
  const std::string home = EnvOr("HOME", "");
  const std::string base =
      EnvOr("XDG_CACHE_HOME", home.empty() ? "" : home + "/.cache");
  return base.empty() ? "" : base + "/baton/cuda";
}

NvrtcCompiler& NvrtcCompiler::Default() {
  static NvrtcCompiler* compiler =  // never destroyed
      new NvrtcCompiler(Options{DefaultCacheDir()});
  return *compiler;
}

NvrtcCompiler::NvrtcCompiler(Options options) : options_(std::move(options)) {}

void NvrtcCompiler::ClearMemoryCache() {
  std::lock_guard<std::mutex> lock(mu_);
  memory_.clear();
}

bool NvrtcCompiler::ReadDisk(const std::string& path, Entry* entry) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (bytes.size() < kFileHeader + sizeof(uint64_t) ||
      bytes.compare(0, sizeof kFileMagic, kFileMagic, sizeof kFileMagic) != 0) {
    return false;
  }
  uint64_t code_size = 0;
  uint64_t log_size = 0;
  std::memcpy(&code_size, bytes.data() + sizeof kFileMagic, sizeof code_size);
  std::memcpy(&log_size, bytes.data() + sizeof kFileMagic + sizeof code_size,
              sizeof log_size);
  const uint64_t body = bytes.size() - kFileHeader - sizeof(uint64_t);
  if (code_size > body || log_size != body - code_size) return false;
  uint64_t stored = 0;
  const size_t hashed = bytes.size() - sizeof stored;
  std::memcpy(&stored, bytes.data() + hashed, sizeof stored);
  if (XXH64(bytes.data(), hashed, 0) != stored) return false;
  entry->code = bytes.substr(kFileHeader, code_size);
  entry->log = bytes.substr(kFileHeader + code_size, log_size);
  return true;
}

void NvrtcCompiler::WriteDisk(const std::string& path, const Entry& entry) {
  namespace fs = std::filesystem;
  std::string bytes(kFileMagic, sizeof kFileMagic);
  const uint64_t sizes[2] = {entry.code.size(), entry.log.size()};
  bytes.append(reinterpret_cast<const char*>(sizes), sizeof sizes);
  bytes += entry.code;
  bytes += entry.log;
  const uint64_t hash = XXH64(bytes.data(), bytes.size(), 0);
  bytes.append(reinterpret_cast<const char*>(&hash), sizeof hash);

  static std::atomic<uint64_t> counter{0};
  const std::string partial = path + ".tmp." + std::to_string(getpid()) + "." +
                              std::to_string(counter.fetch_add(1));
  std::error_code ec;
  std::string failure;
  fs::create_directories(options_.cache_dir, ec);
  if (ec) {
    failure = "cannot create " + options_.cache_dir + ": " + ec.message();
  } else {
    {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      out.close();
      if (!out) failure = "cannot write " + partial;
    }
    if (failure.empty()) {
      fs::rename(partial, path, ec);  // atomic: racing writers agree
      if (ec) failure = "cannot rename " + partial + ": " + ec.message();
    }
    if (!failure.empty()) fs::remove(partial, ec);
  }
  if (!failure.empty() && !warned_.exchange(true)) {
    std::fprintf(stderr,
                 "baton: the NVRTC disk cache is not written (%s); kernels "
                 "are compiled again in each process (set "
                 "BATON_CUDA_CACHE_DIR to a writable folder)\n",
                 failure.c_str());
  }
}

Result<std::vector<CompiledCubin>> NvrtcCompiler::CompileToCubins(
    const std::vector<std::string>& sources, const std::string& name,
    const std::string& arch, int threads,
    const std::vector<std::string>& extra_options) {
  std::vector<Result<CompiledCubin>> results(
      sources.size(), Internal("not compiled"));
  const size_t workers = std::min(
      sources.size(),
      static_cast<size_t>(threads > 0 ? threads
                                      : std::max(1u, std::thread::
                                                         hardware_concurrency())));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < sources.size(); i = next++) {
      results[i] = CompileToCubin(sources[i],
                                  name + " (part " + std::to_string(i) + ")",
                                  arch, extra_options);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();  // the calling thread compiles too
  for (std::thread& t : pool) t.join();
  std::vector<CompiledCubin> out;
  out.reserve(sources.size());
  for (Result<CompiledCubin>& r : results) {
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
  return out;
}

Result<NvrtcCompiler::Entry> NvrtcCompiler::Compile(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options, bool cubin) {
  const Nvrtc& n = GetNvrtc();
  if (!n.unavailable_reason.empty()) {
    return Unavailable(n, "compile kernel program '" + name + "'");
  }
  std::vector<std::string> options = {"--gpu-architecture=" + arch,
                                      "-std=c++17", "--fmad=false",
                                      "-default-device"};
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  if (cubin) options.push_back("--ptxas-options=--verbose");
  BATON_ASSIGN_OR_RETURN(const auto version, NvrtcVersion());
  // The output kind is part of the key: PTX and CUBIN differ for one arch.
  std::vector<std::string> key_parts = options;
  key_parts.push_back(cubin ? "cubin" : "ptx");
  const XXH128_hash_t key =
      CacheKey(source, version.first, version.second, key_parts);
  const std::pair<uint64_t, uint64_t> memory_key{key.high64, key.low64};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = memory_.find(memory_key); it != memory_.end()) {
      return it->second;
    }
  }
  const std::string path =
      options_.cache_dir.empty()
          ? ""
          : options_.cache_dir + "/" + Hex(key) + (cubin ? ".cubin" : ".ptx");
  Entry entry;
  if (!path.empty() && ReadDisk(path, &entry)) {
    disk_hits_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    memory_.emplace(memory_key, entry);
    return entry;
  }

  compiles_.fetch_add(1);
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
  entry.code.assign(size, '\0');
  result = cubin ? n.get_cubin(program, entry.code.data())
                 : n.get_ptx(program, entry.code.data());
  if (result != kNvrtcSuccess) {
    return NvrtcError(n, result, cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", name);
  }
  // PTX's size counts its terminating NUL.
  if (!cubin) {
    while (!entry.code.empty() && entry.code.back() == '\0') {
      entry.code.pop_back();
    }
  }
  entry.log = ProgramLog(n, program);
  if (!path.empty()) WriteDisk(path, entry);
  std::lock_guard<std::mutex> lock(mu_);
  memory_.emplace(memory_key, entry);
  return entry;
}

Result<std::string> NvrtcCompiler::CompileToPtx(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options) {
  BATON_ASSIGN_OR_RETURN(
      Entry entry, Compile(source, name, arch, extra_options, /*cubin=*/false));
  return std::move(entry.code);
}

Result<CompiledCubin> NvrtcCompiler::CompileToCubin(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options) {
  BATON_ASSIGN_OR_RETURN(
      Entry entry, Compile(source, name, arch, extra_options, /*cubin=*/true));
  CompiledCubin out;
  out.resources = ParsePtxasReport(entry.log);
  out.cubin = std::move(entry.code);
  return out;
}

Result<std::string> CompileToPtx(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options) {
  return NvrtcCompiler::Default().CompileToPtx(source, name, arch,
                                               extra_options);
}

Result<std::string> CompileToCubin(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options) {
  BATON_ASSIGN_OR_RETURN(CompiledCubin out,
                         NvrtcCompiler::Default().CompileToCubin(
                             source, name, arch, extra_options));
  return std::move(out.cubin);
}

}  // namespace baton::cuda
