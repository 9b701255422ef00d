// Device time in traces on CUDA (DESIGN 5.5; cuda_backend.h, device_clock.h):
// while a trace recording is enabled, the CUDA backend brackets its stream
// work with timing events and the trace records the span the device ran it
// in, on the stream's track, converted to the steady clock of traces.
//
// The conversion (device_clock.h) is tested on every machine. The device
// tests skip without a GPU (UnavailableReason()); tools/gpu_check.sh runs
// them on one (ctest -L cuda).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/cuda/device_clock.h"
#include "baton/backend/executable.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/tracer.h"
#include "baton/core/error.h"
#include "baton/runtime/array.h"
#include "baton/runtime/client.h"
#include "baton/runtime/device.h"
#include "baton/runtime/trace_recorder.h"
#include "baton/runtime/transfer.h"

namespace baton {
namespace {

using cuda::AnchorIsFresh;
using cuda::DeviceMsToNs;
using cuda::DeviceSpanToSteady;
using cuda::kAnchorMaxAgeNs;
using cuda::SteadySpan;

// ---------------------------------------------------------------------------
// The conversion, on every machine.

TEST(DeviceClock, MillisecondsBecomeRoundedNanoseconds) {
  EXPECT_EQ(DeviceMsToNs(1.0f), 1'000'000);
  EXPECT_EQ(DeviceMsToNs(0.0005f), 500);
  EXPECT_EQ(DeviceMsToNs(2.5e-7f), 0);  // rounds to the nearest ns
  EXPECT_EQ(DeviceMsToNs(0.0f), 0);
  EXPECT_EQ(DeviceMsToNs(-3.0f), 0);
  EXPECT_EQ(DeviceMsToNs(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(DeviceMsToNs(std::numeric_limits<float>::infinity()), 0);
  EXPECT_EQ(DeviceMsToNs(-std::numeric_limits<float>::infinity()), 0);
  // Huge intervals saturate instead of overflowing.
  EXPECT_EQ(DeviceMsToNs(std::numeric_limits<float>::max()),
            int64_t{1'000'000'000'000'000});
}

TEST(DeviceClock, SpanIsTheAnchorPlusTheDevicesIntervals) {
  // Anchor at 1 ms; the work began 0.5 ms after it and ran 2 ms.
  const SteadySpan s =
      DeviceSpanToSteady(1'000'000, 0.5f, 2.0f, 1'000'000, 10'000'000);
  EXPECT_EQ(s.begin_ns, 1'500'000);
  EXPECT_EQ(s.end_ns, 3'500'000);
}

// The duration comes from the short begin->end interval: 1 us after 900 ms
// is kept to the nanosecond, which the difference of two float intervals
// from the anchor (ulp ~60 ns at 900 ms) would not be.
TEST(DeviceClock, DurationKeepsItsPrecisionFarFromTheAnchor) {
  const int64_t anchor = 5'000'000'000;
  const SteadySpan s = DeviceSpanToSteady(anchor, 900.0f, 0.001f, anchor,
                                          anchor + 2'000'000'000);
  EXPECT_EQ(s.begin_ns, anchor + 900'000'000);
  EXPECT_EQ(s.end_ns - s.begin_ns, 1000);
}

// Before the host enqueued the work it cannot have begun: the span moves
// to that time, keeping its duration.
TEST(DeviceClock, SpanBeforeItsEnqueueMovesToIt) {
  const SteadySpan s = DeviceSpanToSteady(1'000, 0.0f, 0.002f, 5'000, 100'000);
  EXPECT_EQ(s.begin_ns, 5'000);
  EXPECT_EQ(s.end_ns, 7'000);
}

// After the host saw the end pass it cannot have ended (the anchor's host
// time is late by the host's wake-up): the span moves back, keeping its
// duration, as far as the enqueue time allows.
TEST(DeviceClock, SpanAfterItsCompletionMovesBack) {
  const SteadySpan s = DeviceSpanToSteady(10'000, 0.05f, 0.01f, 20'000, 55'000);
  // Measured [60'000, 70'000]; seen done at 55'000.
  EXPECT_EQ(s.begin_ns, 45'000);
  EXPECT_EQ(s.end_ns, 55'000);
}

// A duration longer than the host's whole window cannot be right: it is
// cut to the window.
TEST(DeviceClock, DurationLongerThanTheWindowIsCutToIt) {
  const SteadySpan s = DeviceSpanToSteady(0, 0.001f, 1.0f, 2'000, 12'000);
  EXPECT_EQ(s.begin_ns, 2'000);
  EXPECT_EQ(s.end_ns, 12'000);
}

TEST(DeviceClock, NegativeOrNonFiniteIntervalsCountAsZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  SteadySpan s = DeviceSpanToSteady(50'000, -0.01f, nan, 40'000, 90'000);
  EXPECT_EQ(s.begin_ns, 50'000);
  EXPECT_EQ(s.end_ns, 50'000);
  s = DeviceSpanToSteady(50'000, nan, -1.0f, 60'000, 90'000);
  EXPECT_EQ(s.begin_ns, 60'000);
  EXPECT_EQ(s.end_ns, 60'000);
}

// Inconsistent host times (seen done before enqueued): an empty span at the
// enqueue time, never an inverted one.
TEST(DeviceClock, AnInvertedWindowGivesAnEmptySpan) {
  const SteadySpan s = DeviceSpanToSteady(0, 0.01f, 0.01f, 30'000, 20'000);
  EXPECT_EQ(s.begin_ns, 30'000);
  EXPECT_EQ(s.end_ns, 30'000);
}

// Whatever the device reports, the span lies in the host's window and is
// the measured duration, or the window when that is shorter.
TEST(DeviceClock, EverySpanLiesInItsWindow) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> host(0, 4'000'000'000);
  std::uniform_real_distribution<float> ms(-1.0f, 2000.0f);
  for (int i = 0; i < 100000; ++i) {
    const int64_t anchor = host(rng);
    const int64_t not_before = anchor + host(rng) / 4;
    const int64_t not_after = not_before + host(rng) / 4;
    const float to_begin = ms(rng), duration = ms(rng) / 100.0f;
    const SteadySpan s =
        DeviceSpanToSteady(anchor, to_begin, duration, not_before, not_after);
    ASSERT_LE(not_before, s.begin_ns) << i;
    ASSERT_LE(s.begin_ns, s.end_ns) << i;
    ASSERT_LE(s.end_ns, not_after) << i;
    ASSERT_EQ(s.end_ns - s.begin_ns,
              std::min(DeviceMsToNs(duration), not_after - not_before))
        << i;
    // Inside the window, the device's own placement is kept.
    const int64_t measured = anchor + DeviceMsToNs(to_begin);
    if (measured >= not_before &&
        measured + DeviceMsToNs(duration) <= not_after) {
      ASSERT_EQ(s.begin_ns, measured) << i;
    }
  }
}

TEST(DeviceClock, AnAnchorIsRenewedAfterASecond) {
  const int64_t anchor = 7'000'000'000;
  EXPECT_TRUE(AnchorIsFresh(anchor, anchor));
  EXPECT_TRUE(AnchorIsFresh(anchor, anchor + kAnchorMaxAgeNs - 1));
  EXPECT_FALSE(AnchorIsFresh(anchor, anchor + kAnchorMaxAgeNs));
  EXPECT_FALSE(AnchorIsFresh(anchor, anchor - 1));  // a clock gone backwards
  EXPECT_EQ(kAnchorMaxAgeNs, 1'000'000'000);
}

// Backends that run their work on the host keep the host's timing: no
// device span, and TraceSpan is [launch, now].
TEST(DeviceClock, HostBackendsHaveNoDeviceSpan) {
  Device* cpu = Client::Default().devices()[0];
  const uint64_t token =
      TraceRecorder::Global().Start(TraceRecorder::Filter::kAll);
  std::vector<char> a(4096, 1), b(4096, 0);
  Event e = cpu->CopyAsync(QueueKind::kCompute, b.data(), a.data(), a.size());
  ASSERT_TRUE(e.Wait().ok());
  (void)TraceRecorder::Global().Stop(token);
  int64_t begin = -1, end = -1;
  EXPECT_FALSE(cpu->backend().DeviceSpan(e, &begin, &end));
  EXPECT_EQ(begin, -1);
  const int64_t launched = TraceRecorder::NowNs();
  cpu->backend().TraceSpan(e, launched, &begin, &end);
  EXPECT_EQ(begin, launched);
  EXPECT_GE(end, launched);
  EXPECT_LE(end, TraceRecorder::NowNs());
}

// ---------------------------------------------------------------------------
// With a GPU.

class CudaTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::CudaClient().device_count() == 0) {
      GTEST_SKIP() << cuda::UnavailableReason();
    }
  }
  void TearDown() override {
    if (token_ != 0) (void)TraceRecorder::Global().Stop(token_);
  }
  static Device* Gpu() { return cuda::CudaClient().devices()[0]; }

  void StartRecording() {
    token_ = TraceRecorder::Global().Start(TraceRecorder::Filter::kAll);
  }
  std::vector<TraceRecord> StopRecording() {
    std::vector<TraceRecord> records = TraceRecorder::Global().Stop(token_);
    token_ = 0;
    return records;
  }

  // The records of `kind` labelled `label`.
  static std::vector<TraceRecord> Find(const std::vector<TraceRecord>& records,
                                       TraceRecord::Kind kind,
                                       const std::string& label) {
    std::vector<TraceRecord> out;
    for (const TraceRecord& r : records) {
      if (r.kind == kind && r.label == label) out.push_back(r);
    }
    return out;
  }

  static HostBuffer Floats(const std::vector<float>& v) {
    return HostBuffer{v.data(), Shape{static_cast<int64_t>(v.size())},
                      DType::kFloat32};
  }

  uint64_t token_ = 0;
};

// A copy and a fill enqueued while recording have a device span within
// [enqueue, done]; a copy enqueued while nothing records has none.
TEST_F(CudaTraceTest, StreamWorkIsTimedOnlyWhileARecordingIsEnabled) {
  Device* gpu = Gpu();
  const size_t bytes = size_t{64} << 20;
  const std::vector<float> host(bytes / sizeof(float), 1.5f);
  Array dst = ValueOrThrow(Empty(Shape{static_cast<int64_t>(host.size())},
                                 DType::kFloat32, gpu, MemoryKind::kDevice));
  void* d = dst.impl()->buffer().value()->data();
  int64_t begin = 0, end = 0;

  Event untimed =
      gpu->CopyAsync(QueueKind::kHostToDevice, d, host.data(), bytes);
  ASSERT_TRUE(untimed.Wait().ok());
  EXPECT_FALSE(gpu->backend().DeviceSpan(untimed, &begin, &end));

  StartRecording();
  const int64_t before_copy = TraceRecorder::NowNs();
  Event copy = gpu->CopyAsync(QueueKind::kHostToDevice, d, host.data(), bytes);
  ASSERT_TRUE(copy.Wait().ok());
  const int64_t after_copy = TraceRecorder::NowNs();
  ASSERT_TRUE(gpu->backend().DeviceSpan(copy, &begin, &end));
  EXPECT_LE(before_copy, begin);
  EXPECT_LT(begin, end);  // 64 MiB take the copy engine milliseconds
  EXPECT_LE(end, after_copy);

  const int64_t before_fill = TraceRecorder::NowNs();
  Event fill = gpu->FillAsync(QueueKind::kCompute, d,
                              static_cast<int64_t>(host.size()), 4,
                              0x3f800000u);  // 1.0f: not byte-uniform
  ASSERT_TRUE(fill.Wait().ok());
  const int64_t after_fill = TraceRecorder::NowNs();
  ASSERT_TRUE(gpu->backend().DeviceSpan(fill, &begin, &end));
  EXPECT_LE(before_fill, begin);
  EXPECT_LT(begin, end);
  EXPECT_LE(end, after_fill);
  (void)StopRecording();
}

// The clock anchor is renewed after kAnchorMaxAgeNs: spans timed against
// the old anchor and the new one both lie where the host saw them.
TEST_F(CudaTraceTest, SpansStayInTheirWindowsAcrossAnAnchorRenewal) {
  Device* gpu = Gpu();
  const std::vector<float> host(size_t{1} << 22, 2.0f);
  Array dst = ValueOrThrow(Empty(Shape{static_cast<int64_t>(host.size())},
                                 DType::kFloat32, gpu, MemoryKind::kDevice));
  void* d = dst.impl()->buffer().value()->data();
  StartRecording();
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      std::this_thread::sleep_for(
          std::chrono::nanoseconds(kAnchorMaxAgeNs + 50'000'000));
    }
    const int64_t before = TraceRecorder::NowNs();
    Event copy = gpu->CopyAsync(QueueKind::kHostToDevice, d, host.data(),
                                host.size() * sizeof(float));
    ASSERT_TRUE(copy.Wait().ok());
    const int64_t after = TraceRecorder::NowNs();
    int64_t begin = 0, end = 0;
    ASSERT_TRUE(gpu->backend().DeviceSpan(copy, &begin, &end)) << round;
    EXPECT_LE(before, begin) << round;
    EXPECT_LT(begin, end) << round;
    EXPECT_LE(end, after) << round;
  }
  (void)StopRecording();
}

// The trace of a compiled program on cuda:0: its execute span is the
// device's (the span the backend measured for the run), within
// [call, ready], on the compute track; the put before it is a span of the
// host_to_device track and the read back one of the device_to_host track.
TEST_F(CudaTraceTest, ARunsTraceHasTheDevicesSpansOnTheStreamsTracks) {
  Device* gpu = Gpu();
  const int64_t n = int64_t{1} << 22;  // 16 MiB of float32
  compiler::TraceContext ctx;
  compiler::Tracer x = ctx.AddParameter(
      compiler::ValueType{Shape{n}, DType::kFloat32, MemoryKind::kDevice});
  auto program = std::make_shared<const compiler::Program>(
      compiler::Optimize(ctx.Finish({exp(x) * x + 1.0f})));
  auto exe =
      ValueOrThrow(CompileExecutable(program, {false}, gpu, "traced_run"));
  std::vector<float> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i % 97) / 97.0f;
  }

  StartRecording();
  const int64_t put_call = TraceRecorder::NowNs();
  Array staged =
      ValueOrThrow(DevicePut(Floats(values), gpu, MemoryKind::kDevice));
  Array streamed = ValueOrThrow(
      DevicePut(Floats(values), gpu, MemoryKind::kDevice,
                HostBufferSemantics::kImmutableUntilTransferCompletes));
  staged.BlockUntilReady();
  streamed.BlockUntilReady();
  const int64_t put_ready = TraceRecorder::NowNs();

  std::vector<CallArgument> call(1);
  call[0].array = staged;
  const int64_t called = TraceRecorder::NowNs();
  std::vector<Array> out = ValueOrThrow(exe->Execute(call));
  ASSERT_EQ(out.size(), 1u);
  out[0].BlockUntilReady();
  const int64_t ready = TraceRecorder::NowNs();

  std::vector<float> back(static_cast<size_t>(n));
  const int64_t get_call = TraceRecorder::NowNs();
  ThrowIfError(CopyToHost(out[0], back.data(), back.size() * sizeof(float)));
  const int64_t get_ready = TraceRecorder::NowNs();
  const std::vector<TraceRecord> records = StopRecording();
  EXPECT_FLOAT_EQ(back[5], std::exp(values[5]) * values[5] + 1.0f);

  const std::vector<TraceRecord> runs =
      Find(records, TraceRecord::Kind::kExecute, "traced_run");
  ASSERT_EQ(runs.size(), 1u);
  const TraceRecord& run = runs[0];
  EXPECT_EQ(run.track, TraceTrack::kCompute);
  EXPECT_EQ(run.device_id, gpu->id());
  EXPECT_LE(called, run.begin_ns);
  EXPECT_LT(run.begin_ns, run.end_ns);
  EXPECT_LE(run.end_ns, ready);
  // It is the device's span of the run (the outputs' event carries it), not
  // the host's view of it.
  int64_t begin = 0, end = 0;
  ASSERT_TRUE(gpu->backend().DeviceSpan(
      ValueOrThrow(out[0].impl()->ReadyEvent()), &begin, &end));
  EXPECT_EQ(run.begin_ns, begin);
  EXPECT_EQ(run.end_ns, end);

  const std::vector<TraceRecord> puts =
      Find(records, TraceRecord::Kind::kTransfer, "device_put");
  ASSERT_EQ(puts.size(), 2u);  // one per put, however many chunks
  for (const TraceRecord& put : puts) {
    EXPECT_EQ(put.track, TraceTrack::kHostToDevice);
    EXPECT_EQ(put.device_id, gpu->id());
    EXPECT_EQ(put.memory_kind, MemoryKind::kDevice);
    EXPECT_EQ(put.bytes, n * 4);
    EXPECT_LE(put_call, put.begin_ns);
    EXPECT_LT(put.begin_ns, put.end_ns);
    EXPECT_LE(put.end_ns, put_ready);
  }

  const std::vector<TraceRecord> gets =
      Find(records, TraceRecord::Kind::kTransfer, "device_get");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0].track, TraceTrack::kDeviceToHost);
  EXPECT_EQ(gets[0].device_id, gpu->id());
  EXPECT_LE(get_call, gets[0].begin_ns);
  EXPECT_LT(gets[0].begin_ns, gets[0].end_ns);
  EXPECT_LE(gets[0].end_ns, get_ready);
}

}  // namespace
}  // namespace baton
