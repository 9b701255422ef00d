// Issue 3 acceptance 7 (DESIGN R4): donation at definition and call site,
// refusals with nothing consumed, unusable donations warned or refused.
#include <gtest/gtest.h>

#include "baton/core/config.h"
#include "baton/jit/donation.h"
#include "baton/runtime/host_view.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

class JitDonationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_warning_handler([this](const std::string& m) { warnings_.push_back(m); });
  }
  void TearDown() override {
    set_warning_handler(nullptr);
    set_donation_mode(DonationMode::kWarn);
  }
  std::vector<std::string> warnings_;
};

TEST_F(JitDonationTest, DonatedInputBecomesTheOutputStorage) {
  Jitted f = AddOne({0});
  Array x = Floats({1, 2, 3});
  const void* storage = ValueOrThrow(x.impl()->buffer())->data();
  Array alias = x;
  Array y = f({x})[0];
  EXPECT_TRUE(x.IsDeleted());
  EXPECT_TRUE(alias.IsDeleted());  // every reference sees it
  EXPECT_EQ(ValueOrThrow(y.impl()->buffer())->data(), storage);
  EXPECT_EQ(ToHost(y), (std::vector<float>{2, 3, 4}));
  try {
    x.BlockUntilReady();
    FAIL();
  } catch (const DeletedArrayError& e) {
    EXPECT_NE(std::string(e.what()).find("donated to add_one"), std::string::npos);
  }
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(JitDonationTest, CallSiteDonationConsumesAtOnce) {
  Jitted f = AddOne();
  Array x = Floats({1, 2});
  Array other_ref = x;
  Donated d = donate(x);
  EXPECT_TRUE(other_ref.IsDeleted());  // consumed at once
  Array y = f({std::move(d)})[0];
  EXPECT_EQ(ToHost(y), (std::vector<float>{2, 3}));
  // Passing x again is a use of a consumed array.
  auto again = f.Call({x});
  EXPECT_EQ(again.status().code(), ErrorCode::kDeletedArray);
  EXPECT_NE(again.status().message().find("donated to add_one"), std::string::npos);
}

TEST_F(JitDonationTest, DonationWithLiveViewIsRefusedAndConsumesNothing) {
  if (!Dev()->host_addressable(MemoryKind::kDevice)) {
    GTEST_SKIP() << "no host views of " << Dev()->ToString()
                 << "'s device memory (R7)";
  }
  Jitted f = AddOne({0});
  Array x = Floats({1, 2});
  {
    HostView view = ValueOrThrow(HostView::Acquire(x, false, "np.asarray view"));
    auto r = f.Call({x});
    EXPECT_EQ(r.status().code(), ErrorCode::kDonation);
    EXPECT_NE(r.status().message().find("np.asarray view"), std::string::npos);
    EXPECT_FALSE(x.IsDeleted());
    EXPECT_THROW(donate(x), DonationError);
    EXPECT_FALSE(x.IsDeleted());
  }
  EXPECT_EQ(ToHost(f({x})[0]), (std::vector<float>{2, 3}));  // works after
}

TEST_F(JitDonationTest, SameArrayDonatedTwiceOrAlsoUndonatedIsRefused) {
  Jitted two([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] + a[1]};
  }, {.name = "two", .donate_argnums = {0}});
  Array x = Floats({1, 2});
  const int64_t before = Stats().bytes_in_use;
  auto r = two.Call({x, x});  // donated and undonated
  EXPECT_EQ(r.status().code(), ErrorCode::kDonation);
  EXPECT_NE(r.status().message().find("also passed undonated"), std::string::npos);
  EXPECT_FALSE(x.IsDeleted());
  Jitted both([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] + a[1]};
  }, {.name = "both", .donate_argnums = {0, 1}});
  r = both.Call({x, x});
  EXPECT_EQ(r.status().code(), ErrorCode::kDonation);
  EXPECT_NE(r.status().message().find("donated twice"), std::string::npos);
  EXPECT_FALSE(x.IsDeleted());
  EXPECT_EQ(Stats().bytes_in_use, before);
}

TEST_F(JitDonationTest, DeletedArgumentIsAnErrorBeforeAnythingIsConsumed) {
  Jitted two([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] + a[1]};
  }, {.name = "two", .donate_argnums = {0}});
  Array x = Floats({1, 2}), y = Floats({3, 4});
  y.Delete();
  auto r = two.Call({x, y});
  EXPECT_EQ(r.status().code(), ErrorCode::kDeletedArray);
  EXPECT_FALSE(x.IsDeleted());
}

TEST_F(JitDonationTest, UnusableDonationIsFreedAndWarned) {
  // The donated f32[1024] can serve no output (the output is f32[]).
  Jitted total([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0])};
  }, {.name = "total", .donate_argnums = {0}});
  Array x = Floats(std::vector<float>(1024, 1.f));
  ASSERT_TRUE(Dev()->Synchronize().ok());  // the copy in, on an accelerator
  const int64_t before = Stats().bytes_in_use;
  Array s = total({x})[0];
  s.BlockUntilReady();
  EXPECT_TRUE(x.IsDeleted());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0],
            UnusableDonationMessage("total", {"argument 0 (float32(1024,))"},
                                    /*per_device=*/false, /*refused=*/false));
  // Freed once the call is done: only the scalar output remains.
  EXPECT_EQ(Stats().bytes_in_use - before, 256 - 4096);
  EXPECT_EQ(ToHost(s)[0], 1024.f);
}

TEST_F(JitDonationTest, UnusableDonationInErrorModeRaisesBeforeRunning) {
  set_donation_mode(DonationMode::kError);
  Jitted total([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0])};
  }, {.name = "total", .donate_argnums = {0}});
  Array x = Floats(std::vector<float>(1024, 1.f));
  auto r = total.Call({x});
  EXPECT_EQ(r.status().code(), ErrorCode::kDonation);
  EXPECT_EQ(r.status().message(),
            UnusableDonationMessage("total", {"argument 0 (float32(1024,))"},
                                    /*per_device=*/false, /*refused=*/true));
  EXPECT_FALSE(x.IsDeleted());
  // Call-site donation marker given back too: the array is live again.
  auto r2 = total.Call({donate(x)});
  EXPECT_EQ(r2.status().code(), ErrorCode::kDonation);
}

// One text for single-device and partitioned calls (python/baton/
// _partitioned_call.py gets it through the bindings).
TEST_F(JitDonationTest, UnusableDonationMessageOfEachKindOfCall) {
  EXPECT_EQ(UnusableDonationMessage("f", {"argument x (float32[4])"},
                                    /*per_device=*/false, /*refused=*/false),
            "f: donated buffers that no output can reuse (reuse needs an "
            "output of the same byte size, dtype and memory kind, computed "
            "after the program's last read of the buffer): argument x "
            "(float32[4]). They are freed when the call is done.");
  EXPECT_EQ(UnusableDonationMessage("g", {"argument [0][0]", "argument [1]"},
                                    /*per_device=*/true, /*refused=*/true),
            "g: donated buffers that no output can reuse on every device "
            "(reuse needs an output of the same block size, dtype and memory "
            "kind, computed in the stage that reads the buffer last): "
            "argument [0][0]; argument [1]. Nothing was consumed (bt.config "
            "donation mode is \"error\"; \"warn\" frees them after the call "
            "instead).");
}

TEST_F(JitDonationTest, PassThroughReturnsSameArrayOrDonatedStorage) {
  Jitted ident([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0], a[1] * 2};
  }, {.name = "ident"});
  Array x = Floats({1}), y = Floats({2});
  std::vector<Array> out = ident({x, y});
  EXPECT_TRUE(out[0].Is(x));  // undonated parameter returned unchanged
  Jitted ident_donated([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0]};
  }, {.name = "ident_donated", .donate_argnums = {0}});
  // On an accelerator the copies in (and their staging memory) may still
  // be in flight: measure once they are done.
  ASSERT_TRUE(Dev()->Synchronize().ok());
  const int64_t before = Stats().bytes_in_use;
  Array z = ident_donated({x})[0];
  EXPECT_TRUE(x.IsDeleted());
  EXPECT_EQ(ToHost(z)[0], 1.f);
  EXPECT_EQ(Stats().bytes_in_use, before);  // no copy
}

TEST_F(JitDonationTest, CapturedArraysAreHiddenArgumentsNotConstants) {
  Array w = Floats(std::vector<float>(1024, 3.f));
  Jitted f([w](TraceScope& s, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] * s.Capture(w)};
  }, {.name = "scale"});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{1024})}, Dev()));
  EXPECT_EQ(exe->memory_analysis().constant_size_in_bytes, 0);
  EXPECT_EQ(exe->program().num_parameters(), 2);
  Array y = f({Floats(std::vector<float>(1024, 2.f))})[0];
  EXPECT_EQ(ToHost(y)[1023], 6.f);
}

}  // namespace
}  // namespace baton
