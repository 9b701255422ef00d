// NvrtcCompiler's disk cache (backend/cuda/codegen/nvrtc_compiler.h): one
// file per result in $BATON_CUDA_CACHE_DIR, read by other objects and other
// processes, keyed by source, options, architecture and output kind, damaged
// files recompiled, an unwritable folder no error. Without NVRTC the tests
// that compile skip with the loader's reason.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/backend/cuda/codegen/nvrtc_compiler.h"
#include "codegen/nvrtc_test_util.h"

namespace baton {
namespace {

using testing::kRealArch;
using testing::kVirtualArch;

// The kernel the disk-cache tests compile.
std::string OnDiskKernelSource() {
  return std::string(cuda::codegen::DevicePrelude()) +
         "extern \"C\" __global__ void on_disk(float* o) "
         "{ o[threadIdx.x] = 3.0f; }\n";
}

// A fresh folder for one test's disk cache, removed after it.
class NvrtcDiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "baton-nvrtc-XXXXXX")
            .string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // The cache files (not the temporary ones).
  std::vector<std::filesystem::path> Files() const {
    std::vector<std::filesystem::path> files;
    for (const auto& f : std::filesystem::directory_iterator(dir_)) {
      files.push_back(f.path());
    }
    return files;
  }

  std::string dir_;
  const std::string source_ = OnDiskKernelSource();
};

// Twice in one object: one compile, then the memory cache. A fresh object
// on the same folder: no compile, the same bytes and report from disk.
TEST_F(NvrtcDiskCacheTest, CompilesOnceThenReadsMemoryThenDisk) {
  BATON_SKIP_WITHOUT_NVRTC();
  cuda::NvrtcCompiler first({dir_});
  auto a = first.CompileToCubin(source_, "on_disk.cu", kRealArch);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  auto b = first.CompileToCubin(source_, "on_disk.cu", kRealArch);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(first.compiles(), 1);
  EXPECT_EQ(first.disk_hits(), 0);
  EXPECT_EQ(a->cubin, b->cubin);
  ASSERT_EQ(Files().size(), 1u);
  EXPECT_EQ(Files()[0].extension(), ".cubin");

  cuda::NvrtcCompiler second({dir_});
  auto c = second.CompileToCubin(source_, "on_disk.cu", kRealArch);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(second.compiles(), 0);
  EXPECT_EQ(second.disk_hits(), 1);
  EXPECT_EQ(c->cubin, a->cubin);
  ASSERT_EQ(c->resources.size(), 1u);
  EXPECT_EQ(c->resources[0].name, "on_disk");
  EXPECT_EQ(c->resources[0].registers, a->resources[0].registers);

  // Clearing the memory cache sends the next call to disk.
  first.ClearMemoryCache();
  ASSERT_TRUE(first.CompileToCubin(source_, "on_disk.cu", kRealArch).ok());
  EXPECT_EQ(first.compiles(), 1);
  EXPECT_EQ(first.disk_hits(), 1);
}

// Issue 33's acceptance: a second process reuses the disk cache. This test
// compiles into a fresh folder, then runs this test binary again as a child
// (the disabled test below, which compiles the same source on that folder and
// writes its compile count to a file): the child compiles nothing.
TEST_F(NvrtcDiskCacheTest, ASecondProcessCompilesNothing) {
  BATON_SKIP_WITHOUT_NVRTC();
  cuda::NvrtcCompiler first({dir_});
  ASSERT_TRUE(first.CompileToCubin(source_, "k.cu", kRealArch).ok());
  ASSERT_EQ(first.compiles(), 1);
  const std::string report = dir_ + "/child_report.txt";
  const std::string command =
      "BATON_NVRTC_CHILD_DIR='" + dir_ + "' BATON_NVRTC_CHILD_REPORT='" +
      report + "' '" + std::filesystem::read_symlink("/proc/self/exe").string() +
      "' --gtest_also_run_disabled_tests "
      "--gtest_filter=NvrtcDiskCacheChild.DISABLED_CompileOnTheFolder "
      ">/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(report);
  std::string compiles, disk_hits;
  in >> compiles >> disk_hits;
  EXPECT_EQ(compiles, "0");
  EXPECT_EQ(disk_hits, "1");
}

// The child of ASecondProcessCompilesNothing (disabled: it runs only there).
TEST(NvrtcDiskCacheChild, DISABLED_CompileOnTheFolder) {
  const char* dir = std::getenv("BATON_NVRTC_CHILD_DIR");
  const char* report = std::getenv("BATON_NVRTC_CHILD_REPORT");
  ASSERT_NE(dir, nullptr);
  ASSERT_NE(report, nullptr);
  cuda::NvrtcCompiler compiler({dir});
  ASSERT_TRUE(
      compiler.CompileToCubin(OnDiskKernelSource(), "k.cu", kRealArch).ok());
  std::ofstream(report) << compiler.compiles() << " " << compiler.disk_hits()
                        << "\n";
}

// Another option, architecture or output kind is another key: a compile.
TEST_F(NvrtcDiskCacheTest, AnotherOptionOrArchitectureCompiles) {
  BATON_SKIP_WITHOUT_NVRTC();
  cuda::NvrtcCompiler warm({dir_});
  ASSERT_TRUE(warm.CompileToCubin(source_, "k.cu", kRealArch).ok());
  cuda::NvrtcCompiler compiler({dir_});
  ASSERT_TRUE(compiler.CompileToCubin(source_, "k.cu", kRealArch).ok());
  EXPECT_EQ(compiler.compiles(), 0);
  auto optioned =
      compiler.CompileToCubin(source_, "k.cu", kRealArch, {"-DBT_OTHER=1"});
  ASSERT_TRUE(optioned.ok()) << optioned.status().to_string();
  EXPECT_EQ(compiler.compiles(), 1);
  auto other_arch = compiler.CompileToCubin(source_, "k.cu", "sm_80");
  ASSERT_TRUE(other_arch.ok()) << other_arch.status().to_string();
  EXPECT_EQ(compiler.compiles(), 2);
  auto ptx = compiler.CompileToPtx(source_, "k.cu", kVirtualArch);
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_EQ(compiler.compiles(), 3);
  EXPECT_EQ(Files().size(), 4u);
  // The name is not part of the key: it only labels diagnostics.
  ASSERT_TRUE(compiler.CompileToCubin(source_, "renamed.cu", kRealArch).ok());
  EXPECT_EQ(compiler.compiles(), 3);
}

// A cache file cut short, with a flipped byte, or empty is ignored: the
// source is compiled again, the result is right, and the file is rewritten.
TEST_F(NvrtcDiskCacheTest, ACorruptFileIsRecompiledAndRewritten) {
  BATON_SKIP_WITHOUT_NVRTC();
  std::string good;
  {
    cuda::NvrtcCompiler compiler({dir_});
    auto out = compiler.CompileToCubin(source_, "k.cu", kRealArch);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    good = out->cubin;
  }
  ASSERT_EQ(Files().size(), 1u);
  const std::filesystem::path file = Files()[0];
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in),
                 std::istreambuf_iterator<char>());
  }
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x20;
  for (const std::string& damaged :
       {bytes.substr(0, bytes.size() / 2), flipped, std::string()}) {
    {
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out << damaged;
    }
    cuda::NvrtcCompiler compiler({dir_});
    auto out = compiler.CompileToCubin(source_, "k.cu", kRealArch);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(compiler.compiles(), 1);
    EXPECT_EQ(compiler.disk_hits(), 0);
    EXPECT_EQ(out->cubin, good);
    // Rewritten: the next object reads it. (Not byte-equal to the first
    // file: ptxas's report in it carries its own compile time.)
    cuda::NvrtcCompiler reader({dir_});
    auto again = reader.CompileToCubin(source_, "k.cu", kRealArch);
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(reader.compiles(), 0);
    EXPECT_EQ(reader.disk_hits(), 1);
    EXPECT_EQ(again->cubin, good);
  }
  cuda::NvrtcCompiler after({dir_});
  ASSERT_TRUE(after.CompileToCubin(source_, "k.cu", kRealArch).ok());
  EXPECT_EQ(after.compiles(), 0);
}

// A folder that cannot be created is no error: the result comes back, the
// compile counts, and nothing is cached on disk.
TEST_F(NvrtcDiskCacheTest, AnUnwritableFolderIsNotAnError) {
  BATON_SKIP_WITHOUT_NVRTC();
  const std::string blocker = dir_ + "/a_file";
  { std::ofstream(blocker) << "x"; }
  cuda::NvrtcCompiler compiler({blocker + "/cache"});
  auto out = compiler.CompileToPtx(source_, "k.cu", kVirtualArch);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(compiler.compiles(), 1);
  ASSERT_TRUE(compiler.CompileToPtx(source_, "k.cu", kVirtualArch).ok());
  EXPECT_EQ(compiler.compiles(), 1);  // the memory cache still works
}

TEST(NvrtcCompilerTest, TheDefaultCacheFolderFollowsTheEnvironment) {
  const char* saved = std::getenv("BATON_CUDA_CACHE_DIR");
  const std::string saved_value = saved != nullptr ? saved : "";
  setenv("BATON_CUDA_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(cuda::NvrtcCompiler::DefaultCacheDir(), "/some/where");
  setenv("BATON_CUDA_CACHE_DIR", "", 1);  // set but empty: no disk cache
  EXPECT_EQ(cuda::NvrtcCompiler::DefaultCacheDir(), "");
  unsetenv("BATON_CUDA_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string xdg_value = xdg != nullptr ? xdg : "";
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(cuda::NvrtcCompiler::DefaultCacheDir(), "/xdg/baton/cuda");
  unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    EXPECT_EQ(cuda::NvrtcCompiler::DefaultCacheDir(),
              std::string(home) + "/.cache/baton/cuda");
  }
  if (xdg != nullptr) setenv("XDG_CACHE_HOME", xdg_value.c_str(), 1);
  if (saved != nullptr) setenv("BATON_CUDA_CACHE_DIR", saved_value.c_str(), 1);
}

}  // namespace
}  // namespace baton
