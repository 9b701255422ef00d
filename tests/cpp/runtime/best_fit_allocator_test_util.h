// Helpers for the BestFitAllocator tests (best_fit_allocator_*_test.cc): a
// region provider that counts and can refuse, and the test fixture.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "baton/runtime/best_fit_allocator.h"

namespace baton::testing {

inline constexpr size_t kKiB = 1024;
inline constexpr size_t kMiB = 1024 * 1024;

inline uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Counts what the allocator holds, checks every region comes back with the
// size it was given, and can be told to refuse.
class FakeRegionProvider final : public RegionProvider {
 public:
  ~FakeRegionProvider() override {
    EXPECT_TRUE(regions_.empty()) << "the allocator leaked a region";
  }

  void* AllocateRegion(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++allocate_calls_;
    if (fail_next_ > 0) {
      --fail_next_;
      return nullptr;
    }
    void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (p == nullptr) return nullptr;
    regions_[p] = bytes;
    bytes_ += bytes;
    return p;
  }

  void FreeRegion(void* ptr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = regions_.find(ptr);
    ASSERT_NE(it, regions_.end()) << "freed a region it never got";
    EXPECT_EQ(it->second, bytes);
    bytes_ -= it->second;
    regions_.erase(it);
    ++free_calls_;
    std::free(ptr);
  }

  void AdviseSmallPages(void* ptr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    small_page_advice_.emplace_back(reinterpret_cast<uintptr_t>(ptr), bytes);
  }
  // (address, bytes) of every AdviseSmallPages call.
  std::vector<std::pair<uintptr_t, size_t>> small_page_advice() const {
    return Locked([&] { return small_page_advice_; });
  }

  void FailNext(int n) {
    Locked([&] { fail_next_ = n; });
  }
  int regions() const {
    return Locked([&] { return static_cast<int>(regions_.size()); });
  }
  size_t bytes() const {
    return Locked([&] { return bytes_; });
  }
  int allocate_calls() const {
    return Locked([&] { return allocate_calls_; });
  }
  int free_calls() const {
    return Locked([&] { return free_calls_; });
  }
  std::vector<uintptr_t> bases() const {
    return Locked([&] {
      std::vector<uintptr_t> out;
      for (const auto& [p, n] : regions_) out.push_back(Addr(p));
      return out;
    });
  }

 private:
  template <typename F>
  auto Locked(F f) const -> decltype(f()) {
    std::lock_guard<std::mutex> lock(mu_);
    return f();
  }

  mutable std::mutex mu_;
  std::map<void*, size_t> regions_;
  size_t bytes_ = 0;
  int fail_next_ = 0;
  std::vector<std::pair<uintptr_t, size_t>> small_page_advice_;
  int allocate_calls_ = 0;
  int free_calls_ = 0;
};

inline void* MustAllocate(BestFitAllocator& a, size_t bytes,
                          int queue = kNoQueue) {
  Result<void*> r = a.Allocate(bytes, queue);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : nullptr;
}

// A 4 KiB region holds exactly 16 granules, so tests can fill one completely
// and know every block's address.
inline BestFitAllocator::Options SmallRegions() {
  BestFitAllocator::Options o;
  o.min_region_bytes = 4 * kKiB;
  return o;
}

class BestFitAllocatorTest : public ::testing::Test {
 protected:
  FakeRegionProvider provider_;  // declared first: must outlive the allocator
};

}  // namespace baton::testing
