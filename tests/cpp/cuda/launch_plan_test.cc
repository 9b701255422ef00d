// LaunchPlan (backend/launch_plan.h): when a segment's recording is
// captured, replayed, updated (and which nodes) or captured again, from the
// resolved nodes of call after call. Pure logic: no device.
#include "baton/backend/launch_plan.h"

#include <gtest/gtest.h>

#include <vector>

namespace baton {
namespace {

using Mode = LaunchPlan::Mode;

void* At(uintptr_t a) { return reinterpret_cast<void*>(a); }

LaunchNode Kernel(int command, std::vector<uintptr_t> ptrs) {
  LaunchNode n;
  n.kind = LaunchNode::Kind::kKernel;
  n.command = command;
  for (uintptr_t p : ptrs) n.pointers.push_back(At(p));
  return n;
}
LaunchNode Copy(int command, uintptr_t dst, uintptr_t src) {
  LaunchNode n;
  n.kind = LaunchNode::Kind::kCopy;
  n.command = command;
  n.pointers = {At(dst), At(src)};
  return n;
}
LaunchNode Gemm(int command, uintptr_t a, uintptr_t b, uintptr_t c) {
  LaunchNode n;
  n.kind = LaunchNode::Kind::kGemm;
  n.command = command;
  n.pointers = {At(a), At(b), At(c)};
  return n;
}

std::vector<LaunchNode> Segment(uintptr_t in, uintptr_t out) {
  return {Kernel(0, {in, 0x1000}), Kernel(1, {0x1000, out}),
          Copy(2, out + 64, out)};
}

TEST(LaunchPlanTest, CapturesOnTheThirdCallWithOneTopologyThenReplays) {
  LaunchPlan plan;
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kDirect);
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kDirect);
  EXPECT_FALSE(plan.has_recording());
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kCapture);
  EXPECT_TRUE(plan.has_recording());
  for (int i = 0; i < 4; ++i) {
    const LaunchPlan::Decision d = plan.Next(Segment(0x10, 0x20));
    EXPECT_EQ(d.mode, Mode::kReplay);
    EXPECT_TRUE(d.updated_nodes.empty());
  }
  EXPECT_EQ(plan.counters().direct, 2);
  EXPECT_EQ(plan.counters().captures, 1);
  EXPECT_EQ(plan.counters().replays, 4);
  EXPECT_EQ(plan.counters().updates, 0);
  EXPECT_EQ(plan.counters().recaptures, 0);
}

TEST(LaunchPlanTest, WarmUpCountsCallsWithOneTopologyInARow) {
  LaunchPlan plan;
  // Addresses may change during warm-up; the topology may not.
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kDirect);
  EXPECT_EQ(plan.Next(Segment(0x30, 0x40)).mode, Mode::kDirect);
  EXPECT_EQ(plan.Next({Kernel(0, {0x10, 0x1000})}).mode, Mode::kDirect);
  std::vector<LaunchNode> two = {Kernel(0, {1, 2}), Kernel(1, {2, 3})};
  EXPECT_EQ(plan.Next(two).mode, Mode::kDirect);
  EXPECT_EQ(plan.Next(two).mode, Mode::kDirect);
  EXPECT_EQ(plan.Next(two).mode, Mode::kCapture);
  EXPECT_EQ(plan.recorded()[1].pointers[1], At(3));
}

TEST(LaunchPlanTest, ChangedKernelAndCopyAddressesAreUpdatedInPlace) {
  LaunchPlan plan;
  for (int i = 0; i < 3; ++i) plan.Next(Segment(0x10, 0x20));
  // The output alternates: the second kernel and the copy bind it.
  LaunchPlan::Decision d = plan.Next(Segment(0x10, 0x80));
  EXPECT_EQ(d.mode, Mode::kUpdate);
  EXPECT_EQ(d.updated_nodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(plan.recorded()[1].pointers[1], At(0x80));
  EXPECT_EQ(plan.recorded()[2].pointers[0], At(0x80 + 64));
  EXPECT_EQ(plan.recorded()[2].pointers[1], At(0x80));
  // Back: updated again; then unchanged: replayed.
  d = plan.Next(Segment(0x10, 0x20));
  EXPECT_EQ(d.mode, Mode::kUpdate);
  EXPECT_EQ(d.updated_nodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kReplay);
  // Only the input moved: only the first kernel.
  d = plan.Next(Segment(0x50, 0x20));
  EXPECT_EQ(d.updated_nodes, (std::vector<int>{0}));
  EXPECT_EQ(plan.counters().updates, 3);
  EXPECT_EQ(plan.counters().updated_nodes, 5);
  EXPECT_EQ(plan.counters().recaptures, 0);
}

TEST(LaunchPlanTest, AnotherTopologyIsRecaptured) {
  LaunchPlan plan;
  for (int i = 0; i < 3; ++i) plan.Next(Segment(0x10, 0x20));
  // The copy became a copy onto itself: no node.
  std::vector<LaunchNode> fewer = Segment(0x10, 0x20);
  fewer.pop_back();
  EXPECT_EQ(plan.Next(fewer).mode, Mode::kRecapture);
  EXPECT_EQ(plan.recorded().size(), 2u);
  EXPECT_EQ(plan.Next(fewer).mode, Mode::kReplay);
  // Same count, another command in the middle.
  std::vector<LaunchNode> other = {Kernel(0, {0x10, 0x1000}),
                                   Kernel(5, {0x1000, 0x20})};
  EXPECT_EQ(plan.Next(other).mode, Mode::kRecapture);
  EXPECT_EQ(plan.recorded()[1].command, 5);
  EXPECT_EQ(plan.counters().recaptures, 2);
  EXPECT_EQ(plan.counters().replays, 1);
}

TEST(LaunchPlanTest, MovedGemmOperandsAreRecapturedNotUpdated) {
  LaunchPlan plan;
  auto run = [](uintptr_t c) {
    return std::vector<LaunchNode>{Kernel(0, {0x10, 0x20}),
                                   Gemm(1, 0x20, 0x30, c)};
  };
  for (int i = 0; i < 3; ++i) plan.Next(run(0x40));
  EXPECT_EQ(plan.Next(run(0x40)).mode, Mode::kReplay);
  EXPECT_EQ(plan.Next(run(0x90)).mode, Mode::kRecapture);
  EXPECT_EQ(plan.recorded()[1].pointers[2], At(0x90));

  LaunchPlan::Options updatable;
  updatable.gemm_updatable = true;
  LaunchPlan other(updatable);
  for (int i = 0; i < 3; ++i) other.Next(run(0x40));
  const LaunchPlan::Decision d = other.Next(run(0x90));
  EXPECT_EQ(d.mode, Mode::kUpdate);
  EXPECT_EQ(d.updated_nodes, (std::vector<int>{1}));
}

TEST(LaunchPlanTest, RecapturingEveryCallAbandonsThePlan) {
  LaunchPlan plan;
  auto run = [](int command) {
    return std::vector<LaunchNode>{Kernel(0, {1, 2}), Kernel(command, {2, 3})};
  };
  for (int i = 0; i < 3; ++i) plan.Next(run(1));
  EXPECT_EQ(plan.Next(run(2)).mode, Mode::kRecapture);
  EXPECT_EQ(plan.Next(run(1)).mode, Mode::kRecapture);
  // A replay in between resets the count.
  EXPECT_EQ(plan.Next(run(1)).mode, Mode::kReplay);
  EXPECT_EQ(plan.Next(run(2)).mode, Mode::kRecapture);
  EXPECT_EQ(plan.Next(run(1)).mode, Mode::kRecapture);
  EXPECT_EQ(plan.Next(run(2)).mode, Mode::kRecapture);
  EXPECT_FALSE(plan.abandoned());
  EXPECT_EQ(plan.Next(run(1)).mode, Mode::kDirect);  // the 4th in a row
  EXPECT_TRUE(plan.abandoned());
  EXPECT_FALSE(plan.has_recording());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(plan.Next(run(1)).mode, Mode::kDirect);
  EXPECT_EQ(plan.counters().abandoned, 1);
  EXPECT_EQ(plan.counters().recaptures, 5);
}

TEST(LaunchPlanTest, ASingleLaunchIsNeverRecorded) {
  LaunchPlan plan;
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(plan.Next({Kernel(0, {1, 2})}).mode, Mode::kDirect);
  }
  EXPECT_EQ(plan.counters().direct, 6);
  EXPECT_EQ(plan.counters().captures, 0);
}

TEST(LaunchPlanTest, DropWarmsUpAgain) {
  LaunchPlan plan;
  for (int i = 0; i < 3; ++i) plan.Next(Segment(0x10, 0x20));
  plan.Drop();  // the device refused the capture
  EXPECT_FALSE(plan.has_recording());
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kDirect);
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kDirect);
  EXPECT_EQ(plan.Next(Segment(0x10, 0x20)).mode, Mode::kCapture);
  EXPECT_EQ(plan.counters().captures, 2);
}

}  // namespace
}  // namespace baton
