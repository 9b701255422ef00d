// Dead-code elimination, common-subexpression elimination, constant
// de-duplication by content and transpose folding (passes.h).
#include "baton/compiler/passes.h"

#include <gtest/gtest.h>

#include <memory>

#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"

namespace baton::compiler {
namespace {

ValueType F32(Shape shape) {
  return ValueType{std::move(shape), DType::kFloat32};
}

int CountKind(const Program& p, OpKind kind) {
  int n = 0;
  for (const Instruction& inst : p.instructions()) n += inst.kind() == kind;
  return n;
}

std::shared_ptr<const Literal> Lit(const Literal& l) {
  return std::make_shared<const Literal>(l);
}

// Runs both programs on the same arguments and expects equal outputs.
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

// ---- Dead-code elimination ----

TEST(DeadCodeEliminationTest, RemovesUnusedOpsKeepsParameters) {
  Program p;
  const ValueId x = p.AddParameter(F32({4})).value();
  const ValueId unused_param = p.AddParameter(F32({2})).value();
  const ValueId e = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId dead = p.Add(UnaryAttrs{UnaryOp::kLog}, {e}).value();
  const ValueId dead2 = p.Add(UnaryAttrs{UnaryOp::kNeg}, {dead}).value();
  const ValueId dead_c =
      p.Add(ConstantAttrs{Lit(Literal::Scalar(1.0f))}, {}).value();
  const ValueId t = p.Add(UnaryAttrs{UnaryOp::kTanh}, {e}).value();
  (void)unused_param;
  (void)dead2;
  (void)dead_c;
  ASSERT_TRUE(p.SetOutputs({t}).ok());

  Program q = EliminateDeadCode(p);
  ASSERT_TRUE(q.Verify().ok()) << ProgramToText(q);
  EXPECT_EQ(q.num_values(), 4) << ProgramToText(q);  // 2 params, exp, tanh
  EXPECT_EQ(q.num_parameters(), 2);
  EXPECT_EQ(q.parameter_type(1), F32({2}));
  EXPECT_EQ(CountKind(q, OpKind::kConstant), 0);
  ASSERT_EQ(q.outputs().size(), 1u);
  EXPECT_EQ(q.instruction(q.outputs()[0]).attrs_as<UnaryAttrs>().op,
            UnaryOp::kTanh);
  ExpectSameResults(p, q,
                    {Literal::FromVector<float>({0, 1, 2, 3}),
                     Literal::FromVector<float>({5, 6})});
}

TEST(DeadCodeEliminationTest, OutputsMayRepeatAndBeParameters) {
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId y = p.AddParameter(F32({3})).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, y}).value();
  p.Add(BinaryAttrs{BinaryOp::kMul}, {x, y}).value();  // dead
  ASSERT_TRUE(p.SetOutputs({s, x, s, y, x}).ok());

  Program q = EliminateDeadCode(p);
  ASSERT_TRUE(q.Verify().ok());
  EXPECT_EQ(q.num_values(), 3);
  const auto& out = q.outputs();
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], out[2]);
  EXPECT_EQ(out[1], q.parameter(0));
  EXPECT_EQ(out[4], q.parameter(0));
  EXPECT_EQ(out[3], q.parameter(1));
  ExpectSameResults(p, q,
                    {Literal::FromVector<float>({1, 2, 3}),
                     Literal::FromVector<float>({4, 5, 6})});
}

TEST(DeadCodeEliminationTest, NoOutputsKeepsOnlyParameters) {
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({}).ok());
  Program q = EliminateDeadCode(p);
  EXPECT_EQ(q.num_values(), 1);
  EXPECT_EQ(q.num_parameters(), 1);
}

// ---- Common-subexpression elimination ----

TEST(CommonSubexpressionEliminationTest, MergesDuplicatesTransitively) {
  Program p;
  const ValueId x = p.AddParameter(F32({4})).value();
  const ValueId e1 = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId e2 = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  // Equal only once e1 and e2 are merged.
  const ValueId a1 = p.Add(BinaryAttrs{BinaryOp::kAdd}, {e1, x}).value();
  const ValueId a2 = p.Add(BinaryAttrs{BinaryOp::kAdd}, {e2, x}).value();
  const ValueId r1 = p.Add(ReshapeAttrs{Shape{2, 2}}, {a1}).value();
  const ValueId r2 = p.Add(ReshapeAttrs{Shape{2, 2}}, {a2}).value();
  ASSERT_TRUE(p.SetOutputs({r1, r2, a2}).ok());

  Program q = EliminateCommonSubexpressions(p);
  ASSERT_TRUE(q.Verify().ok()) << ProgramToText(q);
  EXPECT_EQ(q.num_values(), 4) << ProgramToText(q);  // x, exp, add, reshape
  ASSERT_EQ(q.outputs().size(), 3u);
  EXPECT_EQ(q.outputs()[0], q.outputs()[1]);
  EXPECT_EQ(q.instruction(q.outputs()[2]).kind(), OpKind::kBinary);
  ExpectSameResults(p, q, {Literal::FromVector<float>({0, 1, 2, 3})});
}

TEST(CommonSubexpressionEliminationTest, DifferentAttrsAreNotMerged) {
  Program p;
  const ValueId x = p.AddParameter(F32({4, 6})).value();
  const ValueId y = p.AddParameter(F32({4, 6})).value();
  std::vector<ValueId> outs = {
      p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value(),
      p.Add(UnaryAttrs{UnaryOp::kLog}, {x}).value(),
      p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, y}).value(),
      p.Add(BinaryAttrs{BinaryOp::kSub}, {x, y}).value(),
      p.Add(CompareAttrs{CompareOp::kLt}, {x, y}).value(),
      p.Add(CompareAttrs{CompareOp::kGt}, {x, y}).value(),
      p.Add(SliceAttrs{{0, 0}, {2, 3}, {1, 1}}, {x}).value(),
      p.Add(SliceAttrs{{1, 0}, {3, 3}, {1, 1}}, {x}).value(),
      p.Add(SliceAttrs{{0, 0}, {4, 6}, {2, 2}}, {x}).value(),
      p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {x}).value(),
      p.Add(ReduceAttrs{ReduceOp::kMax, {0}}, {x}).value(),
      p.Add(ReduceAttrs{ReduceOp::kSum, {1}}, {x}).value(),
      p.Add(TransposeAttrs{{1, 0}}, {x}).value(),
      p.Add(ReshapeAttrs{Shape{24}}, {x}).value(),
      p.Add(ReshapeAttrs{Shape{6, 4}}, {x}).value(),
      p.Add(ConvertAttrs{DType::kInt32}, {x}).value(),
      p.Add(ConvertAttrs{DType::kFloat16}, {x}).value(),
      p.Add(IotaAttrs{Shape{4, 6}, DType::kFloat32, 0}, {}).value(),
      p.Add(IotaAttrs{Shape{4, 6}, DType::kFloat32, 1}, {}).value(),
      p.Add(TransferAttrs{MemoryKind::kPinnedHost}, {x}).value(),
      p.Add(TransferAttrs{MemoryKind::kUnpinnedHost}, {x}).value(),
  };
  ASSERT_TRUE(p.SetOutputs(outs).ok());
  Program q = EliminateCommonSubexpressions(p);
  EXPECT_EQ(q.num_values(), p.num_values()) << ProgramToText(q);
  ExpectSameResults(p, q,
                    {Literal::FromDoubles(DType::kFloat32, Shape{4, 6},
                                          std::vector<double>(24, 1.5)),
                     Literal::FromDoubles(DType::kFloat32, Shape{4, 6},
                                          std::vector<double>(24, 2.5))});
}

TEST(CommonSubexpressionEliminationTest, OperandOrderMattersAndParamsStay) {
  Program p;
  const ValueId x = p.AddParameter(F32({4})).value();
  const ValueId x2 = p.AddParameter(F32({4})).value();  // same type: kept
  const ValueId a = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, x2}).value();
  const ValueId b = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x2, x}).value();
  ASSERT_TRUE(p.SetOutputs({a, b, x, x2}).ok());
  Program q = EliminateCommonSubexpressions(p);
  EXPECT_EQ(q.num_parameters(), 2);
  EXPECT_EQ(q.num_values(), 4);  // commutative ops need not merge
  EXPECT_NE(q.outputs()[2], q.outputs()[3]);
}

TEST(CommonSubexpressionEliminationTest, OptimizeRunsCseThenDce) {
  Program p;
  const ValueId x = p.AddParameter(F32({4})).value();
  const ValueId e1 = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId e2 = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  p.Add(UnaryAttrs{UnaryOp::kLog}, {e2}).value();  // dead
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kMul}, {e1, e2}).value();
  ASSERT_TRUE(p.SetOutputs({s}).ok());
  Program q = Optimize(p);
  ASSERT_TRUE(q.Verify().ok());
  EXPECT_EQ(q.num_values(), 3) << ProgramToText(q);  // x, exp, mul(e, e)
  const Instruction& mul = q.instruction(q.outputs()[0]);
  EXPECT_EQ(mul.operands[0], mul.operands[1]);
  ExpectSameResults(p, q, {Literal::FromVector<float>({0, 1, 2, 3})});
}

// ---- Constant de-duplication by content ----

TEST(ConstantDeduplicationTest, EqualContentInDistinctLiteralsMerges) {
  std::vector<float> host(1000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = 0.25f * i;
  Program p;
  const ValueId x = p.AddParameter(F32({1000})).value();
  std::vector<ValueId> outs;
  for (int i = 0; i < 10; ++i) {
    // A fresh Literal (a fresh snapshot) each time, as a capture makes.
    const ValueId c =
        p.Add(ConstantAttrs{Lit(Literal::FromVector(host))}, {}).value();
    outs.push_back(p.Add(BinaryAttrs{BinaryOp::kMul}, {x, c}).value());
  }
  ASSERT_TRUE(p.SetOutputs(outs).ok());
  Program q = Optimize(p);
  EXPECT_EQ(CountKind(q, OpKind::kConstant), 1) << ProgramToText(q);
  EXPECT_EQ(q.num_values(), 3);  // x, the constant, one multiply
  for (ValueId o : q.outputs()) EXPECT_EQ(o, q.outputs()[0]);
  ExpectSameResults(p, q, {Literal::FromVector(host)});
}

TEST(ConstantDeduplicationTest, DifferentContentDtypeOrShapeStayApart) {
  Program p;
  std::vector<ValueId> outs = {
      // Reference: f32[4] {1, 2, 3, 4}.
      p.Add(ConstantAttrs{Lit(Literal::FromVector<float>({1, 2, 3, 4}))}, {})
          .value(),
      // One value differs.
      p.Add(ConstantAttrs{Lit(Literal::FromVector<float>({1, 2, 3, 5}))}, {})
          .value(),
      // Same shape and bytes, other dtype (int32 with float bit patterns).
      p.Add(ConstantAttrs{Lit(
                Literal::FromBytes(Shape{4}, DType::kInt32,
                                   std::vector<float>{1, 2, 3, 4}.data()))},
            {})
          .value(),
      // Same dtype and bytes, other shape.
      p.Add(ConstantAttrs{Lit(
                Literal::FromVector<float>({1, 2, 3, 4}, Shape{2, 2}))},
            {})
          .value(),
      // -0.0 and +0.0 are different bytes.
      p.Add(ConstantAttrs{Lit(Literal::Scalar(0.0f))}, {}).value(),
      p.Add(ConstantAttrs{Lit(Literal::Scalar(-0.0f))}, {}).value(),
      // An empty constant of each shape is still typed by its shape.
      p.Add(ConstantAttrs{Lit(Literal(Shape{0}, DType::kFloat32))}, {}).value(),
      p.Add(ConstantAttrs{Lit(Literal(Shape{0, 3}, DType::kFloat32))}, {})
          .value(),
  };
  // And the duplicates that do merge.
  outs.push_back(
      p.Add(ConstantAttrs{Lit(Literal::FromVector<float>({1, 2, 3, 4}))}, {})
          .value());
  outs.push_back(
      p.Add(ConstantAttrs{Lit(Literal(Shape{0, 3}, DType::kFloat32))}, {})
          .value());
  ASSERT_TRUE(p.SetOutputs(outs).ok());

  Program q = Optimize(p);
  ASSERT_TRUE(q.Verify().ok());
  EXPECT_EQ(CountKind(q, OpKind::kConstant), 8) << ProgramToText(q);
  const auto& o = q.outputs();
  for (size_t i = 0; i < 8; ++i) {
    for (size_t j = i + 1; j < 8; ++j) EXPECT_NE(o[i], o[j]) << i << " " << j;
  }
  EXPECT_EQ(o[8], o[0]);
  EXPECT_EQ(o[9], o[7]);
  ExpectSameResults(p, q, {});
}

TEST(ConstantDeduplicationTest, SharedLiteralMergesAndBroadcastsFollow) {
  auto two = Lit(Literal::Scalar(2.0f));
  Program p;
  const ValueId x = p.AddParameter(F32({8})).value();
  const ValueId c1 = p.Add(ConstantAttrs{two}, {}).value();
  const ValueId c2 = p.Add(ConstantAttrs{two}, {}).value();
  const ValueId c3 =
      p.Add(ConstantAttrs{Lit(Literal::Scalar(2.0f))}, {}).value();
  const ValueId b1 = p.Add(BroadcastInDimAttrs{Shape{8}, {}}, {c1}).value();
  const ValueId b2 = p.Add(BroadcastInDimAttrs{Shape{8}, {}}, {c2}).value();
  const ValueId b3 = p.Add(BroadcastInDimAttrs{Shape{8}, {}}, {c3}).value();
  const ValueId m1 = p.Add(BinaryAttrs{BinaryOp::kMul}, {x, b1}).value();
  const ValueId m2 = p.Add(BinaryAttrs{BinaryOp::kMul}, {x, b2}).value();
  const ValueId m3 = p.Add(BinaryAttrs{BinaryOp::kMul}, {x, b3}).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kAdd}, {m1, m2}).value();
  const ValueId t = p.Add(BinaryAttrs{BinaryOp::kAdd}, {s, m3}).value();
  ASSERT_TRUE(p.SetOutputs({t}).ok());
  Program q = Optimize(p);
  // x, 2, broadcast, mul, add(m, m), add(s, m)
  EXPECT_EQ(q.num_values(), 6) << ProgramToText(q);
  ExpectSameResults(p, q,
                    {Literal::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7})});
}

// ---- Transpose folding ----

// Values 1..n (small integers: every summation order gives the same float).
template <typename T>
Literal Counting(Shape shape) {
  std::vector<T> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i % 7 + 1);
  return Literal::FromVector<T>(v, std::move(shape));
}

// The dot_general of an optimized program (the only one).
const DotGeneralAttrs& TheDot(const Program& q, ValueId* lhs, ValueId* rhs) {
  for (const Instruction& inst : q.instructions()) {
    if (const auto* d = inst.attrs_if<DotGeneralAttrs>()) {
      *lhs = inst.operands[0];
      *rhs = inst.operands[1];
      return *d;
    }
  }
  ADD_FAILURE() << "no dot_general in\n" << ProgramToText(q);
  static const DotGeneralAttrs none;
  return none;
}

// x f32[4,3] @ w.T, w f32[5,3]: parameters x, w, then transpose(w) (`wt`)
// and the dot (`d`).
struct MatmulOfATransposedWeight {
  Program p;
  ValueId x = p.AddParameter(F32({4, 3})).value();
  ValueId w = p.AddParameter(F32({5, 3})).value();
  ValueId wt = p.Add(TransposeAttrs{{1, 0}}, {w}).value();
  ValueId d = p.Add(DotGeneralAttrs{{}, {}, {1}, {0}}, {x, wt}).value();
};

TEST(TransposeFoldingTest, MatmulWithATransposedWeightReadsTheWeight) {
  // x @ w.T: no copy of w; the dot contracts w's dimension 1.
  MatmulOfATransposedWeight m;
  Program& p = m.p;
  ASSERT_TRUE(p.SetOutputs({m.d}).ok());
  Program q = Optimize(p);
  ASSERT_TRUE(q.Verify().ok()) << q.Verify().to_string();
  EXPECT_EQ(CountKind(q, OpKind::kTranspose), 0) << ProgramToText(q);
  ValueId lhs, rhs;
  const DotGeneralAttrs& dot = TheDot(q, &lhs, &rhs);
  EXPECT_EQ(lhs, q.parameter(0));
  EXPECT_EQ(rhs, q.parameter(1));
  EXPECT_EQ(dot.rhs_contracting, std::vector<int64_t>{1});
  EXPECT_EQ(q.type(q.outputs()[0]).shape, Shape({4, 5}));
  ExpectSameResults(p, q, {Counting<float>({4, 3}), Counting<float>({5, 3})});
}

TEST(TransposeFoldingTest, TransposedLhsAndBatchedOperandsFold) {
  // x.T @ y, and a batched product whose lhs swaps its inner two dimensions.
  Program p;
  const ValueId x = p.AddParameter(F32({3, 4})).value();
  const ValueId y = p.AddParameter(F32({3, 5})).value();
  const ValueId a = p.AddParameter(F32({2, 4, 3})).value();
  const ValueId b = p.AddParameter(F32({2, 4, 5})).value();
  const ValueId xt = p.Add(TransposeAttrs{{1, 0}}, {x}).value();
  const ValueId d1 = p.Add(DotGeneralAttrs{{}, {}, {1}, {0}}, {xt, y}).value();
  const ValueId at = p.Add(TransposeAttrs{{0, 2, 1}}, {a}).value();  // [2,3,4]
  const ValueId d2 =
      p.Add(DotGeneralAttrs{{0}, {0}, {2}, {1}}, {at, b}).value();  // [2,3,5]
  ASSERT_TRUE(p.SetOutputs({d1, d2}).ok());
  Program q = Optimize(p);
  ASSERT_TRUE(q.Verify().ok()) << q.Verify().to_string();
  EXPECT_EQ(CountKind(q, OpKind::kTranspose), 0) << ProgramToText(q);
  const auto& first = q.instruction(q.outputs()[0]).attrs_as<DotGeneralAttrs>();
  EXPECT_EQ(first.lhs_contracting, std::vector<int64_t>{0});
  const auto& second = q.instruction(q.outputs()[1]).attrs_as<DotGeneralAttrs>();
  EXPECT_EQ(second.lhs_batch, std::vector<int64_t>{0});
  EXPECT_EQ(second.lhs_contracting, std::vector<int64_t>{1});
  ExpectSameResults(p, q,
                    {Counting<float>({3, 4}), Counting<float>({3, 5}),
                     Counting<float>({2, 4, 3}), Counting<float>({2, 4, 5})});
}

TEST(TransposeFoldingTest, ATransposeWithOtherUsersStaysForThem) {
  MatmulOfATransposedWeight m;
  Program& p = m.p;
  const ValueId e = p.Add(UnaryAttrs{UnaryOp::kExp}, {m.wt}).value();
  ASSERT_TRUE(p.SetOutputs({m.d, e}).ok());
  Program q = Optimize(p);
  ASSERT_TRUE(q.Verify().ok());
  EXPECT_EQ(CountKind(q, OpKind::kTranspose), 1);
  ValueId lhs, rhs;
  TheDot(q, &lhs, &rhs);
  EXPECT_EQ(rhs, q.parameter(1)) << ProgramToText(q);
  ExpectSameResults(p, q, {Counting<float>({4, 3}), Counting<float>({5, 3})});
}

TEST(TransposeFoldingTest, NoFoldThatWouldReorderTheResult) {
  // The lhs's free dimensions (3 then 2) would come out as (2 then 3).
  Program p;
  const ValueId x = p.AddParameter(F32({2, 3, 4})).value();
  const ValueId w = p.AddParameter(F32({4, 5})).value();
  const ValueId xt = p.Add(TransposeAttrs{{1, 0, 2}}, {x}).value();  // [3,2,4]
  const ValueId d = p.Add(DotGeneralAttrs{{}, {}, {2}, {0}}, {xt, w}).value();
  ASSERT_TRUE(p.SetOutputs({d}).ok());
  Program q = Optimize(p);
  ASSERT_TRUE(q.Verify().ok());
  EXPECT_EQ(CountKind(q, OpKind::kTranspose), 1) << ProgramToText(q);
  EXPECT_EQ(q.type(q.outputs()[0]).shape, Shape({3, 2, 5}));
  ExpectSameResults(p, q, {Counting<float>({2, 3, 4}), Counting<float>({4, 5})});
}

TEST(TransposeFoldingTest, IntegersFoldOnlyIntoRowMajorOperands) {
  // Integer products loop over row-major matrices (no GEMM transpose flag):
  // x @ w.T keeps its transpose; a transpose that only moves a size-1
  // dimension leaves the memory row-major and folds.
  const ValueType i32_43{Shape({4, 3}), DType::kInt32};
  const ValueType i32_53{Shape({5, 3}), DType::kInt32};
  const ValueType i32_41{Shape({4, 1}), DType::kInt32};
  const ValueType i32_45{Shape({4, 5}), DType::kInt32};
  Program p;
  const ValueId x = p.AddParameter(i32_43).value();
  const ValueId w = p.AddParameter(i32_53).value();
  const ValueId col = p.AddParameter(i32_41).value();
  const ValueId m = p.AddParameter(i32_45).value();
  const ValueId wt = p.Add(TransposeAttrs{{1, 0}}, {w}).value();
  const ValueId d1 = p.Add(DotGeneralAttrs{{}, {}, {1}, {0}}, {x, wt}).value();
  const ValueId row = p.Add(TransposeAttrs{{1, 0}}, {col}).value();  // [1,4]
  const ValueId d2 = p.Add(DotGeneralAttrs{{}, {}, {1}, {0}}, {row, m}).value();
  ASSERT_TRUE(p.SetOutputs({d1, d2}).ok());
  Program q = Optimize(p);
  ASSERT_TRUE(q.Verify().ok());
  EXPECT_EQ(CountKind(q, OpKind::kTranspose), 1) << ProgramToText(q);
  EXPECT_EQ(q.instruction(q.outputs()[1]).operands[0], q.parameter(2));
  ExpectSameResults(p, q,
                    {Counting<int32_t>({4, 3}), Counting<int32_t>({5, 3}),
                     Counting<int32_t>({4, 1}), Counting<int32_t>({4, 5})});
}

}  // namespace
}  // namespace baton::compiler
