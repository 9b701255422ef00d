// The memory-aware reordering of a program's steps (memory_schedule.h):
// updates run right after their gradients, barriers and transfers back stay
// where they are, offloads move up, fusion and results do not change.
#include "baton/compiler/memory_schedule.h"

#include <gtest/gtest.h>

#include <memory>

#include "baton/backend/cpu/fusion_tiling.h"
#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/step_plan.h"

namespace baton::compiler {
namespace {

ValueType F32(Shape shape, MemoryKind kind = MemoryKind::kDevice) {
  return ValueType{std::move(shape), DType::kFloat32, kind};
}

Literal Ramp(Shape shape, float scale) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (i % 7) - 0.1f;
  return Literal::FromVector(v, std::move(shape));
}

DotGeneralAttrs MatMul() { return DotGeneralAttrs{{}, {}, {1}, {0}}; }

int64_t TempBytes(const Program& p, const std::vector<bool>& donated) {
  return AssignBuffers(p, PlanSteps(p), donated, 1, cpu::kFusionTiling)
      .analysis.temp_size_in_bytes;
}

int CountFused(const Program& p) {
  int n = 0;
  for (const Step& s : PlanSteps(p).steps) {
    n += s.kind == Step::Kind::kFusedElementwise;
  }
  return n;
}

// Position of the first instruction of `kind` computed from `operand`'s
// kind, in scheduled order; -1 if none.
int PositionOf(const Program& p, OpKind kind, int nth = 0) {
  for (ValueId v = 0; v < p.num_values(); ++v) {
    if (p.instruction(v).kind() == kind && nth-- == 0) return v;
  }
  return -1;
}

void ExpectSameResults(const Program& a, const Program& b,
                       const std::vector<Literal>& args) {
  auto ra = Interpret(a, args);
  auto rb = Interpret(b, args);
  ASSERT_TRUE(ra.ok()) << ra.status().to_string();
  ASSERT_TRUE(rb.ok()) << rb.status().to_string();
  ASSERT_EQ(ra.value().size(), rb.value().size());
  for (size_t i = 0; i < ra.value().size(); ++i) {
    EXPECT_EQ(ra.value()[i], rb.value()[i]) << "output " << i;
  }
}

// A two-layer linear "training step" as autodiff emits it: forward,
// backward, then both updates (w - lr * g) at the end.
struct TrainStep {
  Program program;
  ValueId g1 = kNoValue, g0 = kNoValue;
};

TrainStep MakeTrainStep() {
  TrainStep t;
  Program& p = t.program;
  const Shape w = {64, 64};
  const ValueId w0 = p.AddParameter(F32(w)).value();
  const ValueId w1 = p.AddParameter(F32(w)).value();
  const ValueId x = p.AddParameter(F32(w)).value();
  const ValueId h = p.Add(MatMul(), {x, w0}).value();
  const ValueId y = p.Add(MatMul(), {h, w1}).value();
  const ValueId dh = p.Add(MatMul(), {y, w1}).value();  // last read of w1
  const DotGeneralAttrs outer{{}, {}, {0}, {0}};
  t.g1 = p.Add(outer, {h, y}).value();
  t.g0 = p.Add(outer, {x, dh}).value();
  const ValueId lr = p.Add(ConstantAttrs{std::make_shared<const Literal>(
                               Literal::Scalar(0.01f))},
                           {})
                         .value();
  const ValueId lrb = p.Add(BroadcastInDimAttrs{w, {}}, {lr}).value();
  const ValueId s1 = p.Add(BinaryAttrs{BinaryOp::kMul}, {lrb, t.g1}).value();
  const ValueId u1 = p.Add(BinaryAttrs{BinaryOp::kSub}, {w1, s1}).value();
  const ValueId s0 = p.Add(BinaryAttrs{BinaryOp::kMul}, {lrb, t.g0}).value();
  const ValueId u0 = p.Add(BinaryAttrs{BinaryOp::kSub}, {w0, s0}).value();
  EXPECT_TRUE(p.SetOutputs({u0, u1}).ok());
  return t;
}

TEST(MemoryScheduleTest, UpdateRunsRightAfterItsGradient) {
  const TrainStep t = MakeTrainStep();
  const std::vector<bool> donated = {true, true, false};
  const Program q = ScheduleForMemory(t.program, donated);
  ASSERT_TRUE(q.Verify().ok()) << ProgramToText(q);
  // The update of w1 (the first subtract) now comes before the gradient of
  // w0 (the last dot): g1 is dead before g0 exists.
  const int update_w1 = PositionOf(q, OpKind::kBinary, 1);  // mul, sub, ...
  const int g0 = PositionOf(q, OpKind::kDotGeneral, 4);
  ASSERT_GE(update_w1, 0);
  ASSERT_GE(g0, 0);
  EXPECT_LT(update_w1, g0) << ProgramToText(q);
  // One gradient fewer alive at once: 16 KiB less temp.
  EXPECT_EQ(TempBytes(t.program, donated) - TempBytes(q, donated), 64 * 64 * 4)
      << ProgramToText(q);
  EXPECT_EQ(CountFused(q), CountFused(t.program));
  EXPECT_EQ(CountFused(q), 2);  // each update is still one fused step
  // Both updates still overwrite their donated parameters.
  const BufferAssignment ba =
      AssignBuffers(q, PlanSteps(q), donated, 1, cpu::kFusionTiling);
  EXPECT_EQ(ba.analysis.alias_size_in_bytes, 2 * 64 * 64 * 4);
  ExpectSameResults(
      t.program, q,
      {Ramp({64, 64}, 0.01f), Ramp({64, 64}, 0.02f), Ramp({64, 64}, 0.03f)});
}

// An update ready before the last read of its donated parameter waits for
// that read: run earlier, it could not overwrite the parameter (it would
// take the gradient's buffer, and the donated storage would go unused).
TEST(MemoryScheduleTest, UpdateWaitsForTheLastReadOfItsDonatedParameter) {
  Program p;
  const Shape w = {64, 64};
  const ValueId wp = p.AddParameter(F32(w)).value();
  const ValueId x = p.AddParameter(F32(w)).value();
  const ValueId g = p.Add(MatMul(), {x, x}).value();   // independent of w
  const ValueId r = p.Add(MatMul(), {x, wp}).value();  // last read of w
  const ValueId lr = p.Add(ConstantAttrs{std::make_shared<const Literal>(
                               Literal::Scalar(0.01f))},
                           {})
                         .value();
  const ValueId lrb = p.Add(BroadcastInDimAttrs{w, {}}, {lr}).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kMul}, {lrb, g}).value();
  const ValueId u = p.Add(BinaryAttrs{BinaryOp::kSub}, {wp, s}).value();
  ASSERT_TRUE(p.SetOutputs({u, r}).ok());
  const std::vector<bool> donated = {true, false};
  const Program q = ScheduleForMemory(p, donated);
  ASSERT_TRUE(q.Verify().ok()) << ProgramToText(q);
  const BufferAssignment ba =
      AssignBuffers(q, PlanSteps(q), donated, 1, cpu::kFusionTiling);
  EXPECT_EQ(ba.analysis.alias_size_in_bytes, 64 * 64 * 4) << ProgramToText(q);
  EXPECT_TRUE(ba.unusable_donations.empty());
  ExpectSameResults(p, q, {Ramp(w, 0.01f), Ramp(w, 0.02f)});
}

TEST(MemoryScheduleTest, KeepsTheCallingConvention) {
  const TrainStep t = MakeTrainStep();
  const Program q = ScheduleForMemory(t.program, {true, true, false});
  EXPECT_EQ(q.parameter_types(), t.program.parameter_types());
  EXPECT_EQ(q.output_types(), t.program.output_types());
  for (int i = 0; i < q.num_parameters(); ++i) EXPECT_EQ(q.parameter(i), i);
}

TEST(MemoryScheduleTest, ProgramInTheBestOrderIsReturnedAsItIs) {
  Program p;
  const ValueId x = p.AddParameter(F32({8})).value();
  const ValueId e = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId r = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {e}).value();
  ASSERT_TRUE(p.SetOutputs({r}).ok());
  EXPECT_EQ(ProgramToText(ScheduleForMemory(p, {false})), ProgramToText(p));
}

TEST(MemoryScheduleTest, OptimizationBarrierIsNotPulledForward) {
  // t -> barrier(t) frees t as it allocates its copy; it must still stay
  // after z, where the (recomputing) backward pass put it.
  Program p;
  const ValueId x = p.AddParameter(F32({256})).value();
  const ValueId t = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId z = p.Add(UnaryAttrs{UnaryOp::kTanh}, {x}).value();
  const ValueId zr = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {z}).value();
  const ValueId b = p.Add(TransferAttrs{MemoryKind::kDevice}, {t}).value();
  const ValueId out = p.Add(UnaryAttrs{UnaryOp::kLog}, {b}).value();
  ASSERT_TRUE(p.SetOutputs({out, zr}).ok());
  const Program q = ScheduleForMemory(p, {false});
  EXPECT_GT(PositionOf(q, OpKind::kTransfer), PositionOf(q, OpKind::kReduce))
      << ProgramToText(q);
}

TEST(MemoryScheduleTest, OffloadMovesUpTransferBackStays) {
  Program p;
  const ValueId x = p.AddParameter(F32({256})).value();
  const ValueId t = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId a = p.Add(UnaryAttrs{UnaryOp::kTanh}, {x}).value();
  const ValueId ar = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {a}).value();
  const ValueId off =
      p.Add(TransferAttrs{MemoryKind::kPinnedHost}, {t}).value();
  const ValueId back = p.Add(TransferAttrs{MemoryKind::kDevice}, {off}).value();
  const ValueId out = p.Add(UnaryAttrs{UnaryOp::kLog}, {back}).value();
  ASSERT_TRUE(p.SetOutputs({out, ar}).ok());
  const Program q = ScheduleForMemory(p, {false});
  ASSERT_TRUE(q.Verify().ok());
  const int offload = PositionOf(q, OpKind::kTransfer, 0);
  const int transfer_back = PositionOf(q, OpKind::kTransfer, 1);
  const int tanh = PositionOf(q, OpKind::kUnary, 1);  // exp, tanh, log
  ASSERT_EQ(q.instruction(offload).type.memory_kind, MemoryKind::kPinnedHost);
  EXPECT_LT(offload, tanh) << ProgramToText(q);
  EXPECT_GT(transfer_back, PositionOf(q, OpKind::kReduce)) << ProgramToText(q);
  ExpectSameResults(p, q, {Ramp({256}, 0.01f)});
}

}  // namespace
}  // namespace baton::compiler
