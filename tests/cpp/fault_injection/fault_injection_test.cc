// Allocation-failure injection (issue 14, "never crash, never hang, never
// lie"): every scenario of fault_scenarios.h is run once counting its
// allocation sites (K), then once for every N in 1..K with the N-th
// allocation failing (AllocationFaults). Each failing run must
//  (a) return ResourceExhausted -- or OK where the scenario documents the
//      allocation as optional -- never another code, never crash;
//  (b) leave every input live with its values (a donated or overwritten
//      input is consumed only by a successful run);
//  (c) leak nothing: once every array is dropped and the devices are
//      synchronised, every memory space is back to its baseline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "baton/runtime/allocation_faults.h"
#include "baton/runtime/client.h"
#include "fault_injection/fault_scenarios.h"

namespace baton::fault_testing {
namespace {

// Two devices, so scenarios can copy across devices; never destroyed while
// a test runs.
const std::vector<Device*>& Devices() {
  static Client client(2);
  static const std::vector<Device*> devices = client.devices();
  return devices;
}

struct Baseline {
  std::vector<int64_t> bytes;  // per device, per memory kind
};

Baseline BytesInUse() {
  Baseline b;
  for (Device* d : Devices()) {
    EXPECT_TRUE(d->Synchronize().ok());
    for (int k = 0; k < kNumMemoryKinds; ++k) {
      b.bytes.push_back(
          d->memory_space(static_cast<MemoryKind>(k)).stats().bytes_in_use);
    }
  }
  return b;
}

// Bytes left above the baseline, summed (after synchronising).
int64_t Leaked(const Baseline& before, const std::string& when) {
  const Baseline after = BytesInUse();
  int64_t leaked = 0;
  for (size_t i = 0; i < after.bytes.size(); ++i) {
    const int64_t extra = after.bytes[i] - before.bytes[i];
    EXPECT_EQ(extra, 0) << when << ": " << extra << " bytes left in "
                        << Devices()[i / kNumMemoryKinds]->ToString() << " "
                        << memory_kind_name(
                               static_cast<MemoryKind>(i % kNumMemoryKinds));
    leaked += extra;
  }
  for (Device* d : Devices()) {
    EXPECT_TRUE(d->LiveArrays().empty()) << when << ": live arrays remain";
  }
  return leaked;
}

// (b): after a run, every input is consumed exactly as its status says.
void CheckInputs(const Inputs& in, bool succeeded, const std::string& when) {
  for (size_t i = 0; i < in.arrays.size(); ++i) {
    const Input& input = in.arrays[i];
    const std::string what = when + ", input " + std::to_string(i);
    const ConsumedReason::Kind want =
        succeeded ? input.consumed_on_success : ConsumedReason::Kind::kLive;
    const ConsumedReason got = input.array.impl()->consumed_reason();
    EXPECT_EQ(static_cast<int>(got.kind), static_cast<int>(want)) << what;
    EXPECT_EQ(input.array.IsDeleted(), want != ConsumedReason::Kind::kLive)
        << what;
    if (want != ConsumedReason::Kind::kLive) {
      // Consumed: every use says so, with the deleted-array error.
      Result<std::vector<float>> r = ReadFloats(input.array);
      EXPECT_EQ(r.status().code(), ErrorCode::kDeletedArray) << what;
      continue;
    }
    Status values = ExpectValues(input.array, input.values, what);
    EXPECT_TRUE(values.ok()) << values.to_string();
  }
}

struct Totals {
  int scenarios = 0;
  int64_t sites = 0;
  int64_t optional_sites = 0;
  int64_t leaked_bytes = 0;
};
Totals& GlobalTotals() {
  static Totals t;
  return t;
}

class FaultInjectionTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(FaultInjectionTest, EveryAllocationSiteFailsCleanly) {
  const Scenario& sc = GetParam();
  const std::vector<Device*>& devs = Devices();
  ScopedAllocationFaults disarm_on_exit;
  const Baseline baseline = BytesInUse();
  int64_t leaked = 0;

  // Count the sites of a successful run.
  int64_t sites = 0;
  {
    Inputs in = sc.setup(devs);
    AllocationFaults::StartCounting();
    const Status s = sc.run(in, devs);
    sites = AllocationFaults::Stop();
    ASSERT_TRUE(s.ok()) << "the scenario fails without injection: "
                        << s.to_string();
    CheckInputs(in, /*succeeded=*/true, "counting run");
  }
  leaked += Leaked(baseline, "counting run");
  ASSERT_GE(sites, 1) << "the scenario allocates nothing";
  for (int64_t site : sc.optional_sites) ASSERT_LE(site, sites);

  for (int64_t n = 1; n <= sites; ++n) {
    const std::string when = sc.name + ", allocation " + std::to_string(n) +
                             " of " + std::to_string(sites) + " failing";
    const bool optional =
        std::find(sc.optional_sites.begin(), sc.optional_sites.end(), n) !=
        sc.optional_sites.end();
    {
      Inputs in = sc.setup(devs);
      AllocationFaults::FailNth(n);
      const Status s = sc.run(in, devs);
      AllocationFaults::Stop();
      ASSERT_EQ(AllocationFaults::injected(), 1)
          << when << ": the run no longer reaches that allocation (the "
          << "scenario's allocations are not reproducible)";
      if (optional) {
        EXPECT_TRUE(s.ok()) << when << " (optional: " << sc.optional_why
                            << "): " << s.to_string();
      } else {
        EXPECT_EQ(s.code(), ErrorCode::kResourceExhausted)
            << when << ": " << s.to_string();
        EXPECT_NE(s.message().find("injected"), std::string::npos)
            << when << ": not the injected failure: " << s.to_string();
      }
      CheckInputs(in, s.ok(), when);
    }
    leaked += Leaked(baseline, when);
    if (::testing::Test::HasFatalFailure()) return;
  }

  Totals& t = GlobalTotals();
  t.scenarios++;
  t.sites += sites;
  t.optional_sites += static_cast<int64_t>(sc.optional_sites.size());
  t.leaked_bytes += leaked;
  RecordProperty("allocation_sites", static_cast<int>(sites));
  RecordProperty("leaked_bytes", static_cast<int>(leaked));
  std::printf("fault injection: %-28s %3lld allocation sites, %lld leaked "
              "bytes\n",
              sc.name.c_str(), static_cast<long long>(sites),
              static_cast<long long>(leaked));
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, FaultInjectionTest, ::testing::ValuesIn(AllScenarios()),
    [](const ::testing::TestParamInfo<Scenario>& info) {
      return info.param.name;
    });

// The summary over every scenario run in this process.
class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Totals& t = GlobalTotals();
    if (t.scenarios == 0) return;
    std::printf("fault injection: %d scenarios, %lld allocation sites "
                "(%lld optional), %lld bytes leaked\n",
                t.scenarios, static_cast<long long>(t.sites),
                static_cast<long long>(t.optional_sites),
                static_cast<long long>(t.leaked_bytes));
  }
};
const auto* const kSummary =
    ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

// The jitted scenarios exercise what they claim to: captured constants,
// temporaries, and (when donated) a reused input.
TEST(FaultScenarioProgramsTest, HaveConstantsTemporariesAndAliases) {
  const auto analyses = AnalyzeScenarioPrograms(Devices()[0]);
  ASSERT_EQ(analyses.size(), 4u);
  for (const auto& [name, m] : analyses) {
    SCOPED_TRACE(name + ": " + m.ToString());
    std::printf("fault injection program %s: %s\n", name.c_str(),
                m.ToString().c_str());
    EXPECT_GT(m.constant_size_in_bytes, 0);
    const bool donated = name.find("donated") != std::string::npos;
    EXPECT_EQ(m.alias_size_in_bytes > 0, donated);
    if (name.rfind("affine", 0) == 0) {
      EXPECT_GT(m.temp_size_in_bytes, 0);
    }
  }
}

// The hook itself: counts every allocation, fails exactly the armed one
// with the typed error, and costs nothing once stopped.
TEST(AllocationFaultsTest, FailsExactlyTheNthAllocationWithTheTypedError) {
  ScopedAllocationFaults disarm_on_exit;
  MemorySpace& space = Devices()[1]->memory_space(MemoryKind::kUnpinnedHost);
  const int64_t before = space.stats().bytes_in_use;
  AllocationFaults::FailNth(3);
  std::vector<void*> got;
  std::vector<ErrorCode> codes;
  for (int i = 0; i < 5; ++i) {
    Result<void*> r = space.Allocate(1024, kNoQueue, "probe");
    codes.push_back(r.status().code());
    if (r.ok()) got.push_back(r.value());
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("probe"), std::string::npos)
          << "the message names the allocation like a real one";
    }
  }
  EXPECT_EQ(AllocationFaults::Stop(), 5);
  EXPECT_EQ(AllocationFaults::injected(), 1);
  EXPECT_EQ(codes, (std::vector<ErrorCode>{
                       ErrorCode::kOk, ErrorCode::kOk,
                       ErrorCode::kResourceExhausted, ErrorCode::kOk,
                       ErrorCode::kOk}));
  // Stopped: nothing is counted or failed any more.
  Result<void*> after = space.Allocate(1024, kNoQueue, "probe");
  ASSERT_TRUE(after.ok());
  got.push_back(after.value());
  EXPECT_EQ(AllocationFaults::count(), 5);
  for (void* p : got) space.Free(p);
  EXPECT_EQ(space.stats().bytes_in_use, before);
}

}  // namespace
}  // namespace baton::fault_testing
