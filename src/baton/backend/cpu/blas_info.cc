#include "baton/backend/cpu/blas_info.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "baton/core/blas_symbols.h"

namespace baton::cpu {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

int IsaRank(const std::string& isa) {
  if (isa == "avx512") return 3;
  if (isa == "avx2") return 2;
  if (isa == "avx") return 1;
  return 0;
}

std::string CpuIsa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
  if (__builtin_cpu_supports("avx")) return "avx";
  return "sse";
}

}  // namespace

std::string KernelIsa(const std::string& corename) {
  // OpenBLAS's x86-64 kernel families (its DYNAMIC_ARCH targets), by the
  // vector instructions their GEMM kernels use.
  static const std::array<std::pair<const char*, const char*>, 24> kFamilies = {{
      {"skylakex", "avx512"},   {"cooperlake", "avx512"},
      {"sapphirerapids", "avx512"}, {"zen", "avx2"},
      {"haswell", "avx2"},      {"excavator", "avx2"},
      {"sandybridge", "avx"},   {"bulldozer", "avx"},
      {"piledriver", "avx"},    {"steamroller", "avx"},
      {"nehalem", "sse"},       {"penryn", "sse"},
      {"dunnington", "sse"},    {"core2", "sse"},
      {"prescott", "sse"},      {"atom", "sse"},
      {"nano", "sse"},          {"opteron", "sse"},
      {"opteron_sse3", "sse"},  {"barcelona", "sse"},
      {"bobcat", "sse"},        {"katmai", "sse"},
      {"coppermine", "sse"},    {"northwood", "sse"},
  }};
  const std::string name = Lower(corename);
  for (const auto& [family, isa] : kFamilies) {
    if (name == family) return isa;
  }
  return "";
}

BlasInfo QueryBlasInfo() {
  BlasInfo info;
  const char* config = BATON_BLAS(openblas_get_config)();
  const char* core = BATON_BLAS(openblas_get_corename)();
  info.config = config ? config : "";
  info.corename = core ? core : "";
  info.cpu_isa = CpuIsa();
  const std::string kernel = KernelIsa(info.corename);
  // Only a kernel family two or more levels below the CPU (a generic SSE
  // kernel on an AVX2 or AVX-512 CPU, an AVX one on AVX-512) is the fallback
  // this check is for; one level below can be OpenBLAS's deliberate choice
  // (its AVX2 kernels on AVX-512 parts where they are faster).
  if (!kernel.empty() && IsaRank(info.cpu_isa) - IsaRank(kernel) >= 2) {
    info.kernel_fits_cpu = false;
    info.advice = "OpenBLAS chose its '" + info.corename + "' kernels (" + kernel +
                  ") on a CPU with " + info.cpu_isa +
                  ": GEMMs run several times slower than they should. It does "
                  "not know this CPU model; set OPENBLAS_CORETYPE (e.g. " +
                  (info.cpu_isa == "avx512" ? std::string("SkylakeX")
                                            : std::string("Haswell")) +
                  ") before starting the process, or install a newer "
                  "scipy-openblas32 (tools/install_deps.sh pins the one baton "
                  "was tested with).";
  }
  return info;
}

}  // namespace baton::cpu
