// Test oracle for the batching transformation: Vmap(f) on a batch must give,
// for every example, exactly (bitwise) what f gives on that example alone.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/tracer.h"
#include "baton/compiler/transforms/batching.h"

namespace baton::compiler {
inline void PrintTo(const Literal& lit, std::ostream* os) {
  *os << lit.ToString();
}
}  // namespace baton::compiler

namespace baton::compiler::batching_test {

using transforms::BatchedProgram;
using transforms::Vmap;

inline ValueType T(DType dtype, Shape shape,
                   MemoryKind kind = MemoryKind::kDevice) {
  return ValueType{std::move(shape), dtype, kind};
}

// A parameter of the per-example function and the range its test values
// are drawn from (integers: uniform in [lo, hi]; floats: multiples of 0.25).
struct Param {
  ValueType type;
  double lo = -6;
  double hi = 6;
};

inline Shape InsertDim(const Shape& s, int dim, int64_t size) {
  std::vector<int64_t> dims = s.dims();
  dims.insert(dims.begin() + dim, size);
  return Shape(std::move(dims));
}

// Example `b` of a literal batched along `dim`.
inline Literal TakeExample(const Literal& lit, int dim, int64_t b) {
  const std::vector<int64_t>& dims = lit.shape().dims();
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(lit.dtype()));
  for (int i = 0; i < dim; ++i) outer *= dims[i];
  for (size_t i = dim + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[dim];
  std::vector<int64_t> out_dims = dims;
  out_dims.erase(out_dims.begin() + dim);
  Literal out(Shape(out_dims), lit.dtype());
  auto* dst = static_cast<uint8_t*>(out.untyped_mutable_data());
  const auto* src = static_cast<const uint8_t*>(lit.untyped_data());
  if (inner == 0) return out;  // no elements: empty buffers may be null
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + o * inner, src + (o * n + b) * inner,
                static_cast<size_t>(inner));
  }
  return out;
}

inline Literal RandomLiteral(const Param& p, const Shape& shape,
                             uint64_t& state) {
  std::vector<double> values(shape.num_elements());
  for (double& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t r = state >> 33;
    if (p.type.dtype == DType::kBool) {
      v = static_cast<double>(r % 2);
    } else if (is_floating(p.type.dtype)) {
      const int64_t span = static_cast<int64_t>((p.hi - p.lo) * 4) + 1;
      v = p.lo + static_cast<double>(r % span) * 0.25;
    } else {
      const int64_t span = static_cast<int64_t>(p.hi - p.lo) + 1;
      v = p.lo + static_cast<double>(r % span);
    }
  }
  return Literal::FromDoubles(p.type.dtype, shape, values);
}

// Which outputs of f depend on a parameter batched by in_dims: exactly the
// ones Vmap must report batched.
inline std::vector<bool> DependsOnBatched(const Program& f,
                                          const std::vector<int>& in_dims) {
  std::vector<bool> dep(f.num_values(), false);
  for (ValueId id = 0; id < f.num_values(); ++id) {
    const Instruction& inst = f.instruction(id);
    if (const auto* p = inst.attrs_if<ParameterAttrs>()) {
      dep[id] = in_dims[p->index] != -1;
    }
    for (ValueId o : inst.operands) dep[id] = dep[id] || dep[o];
  }
  std::vector<bool> out;
  for (ValueId o : f.outputs()) out.push_back(dep[o]);
  return out;
}

// Vmaps f, checks the result's invariants and compares it with f run on
// each example. Returns the batched program for further checks.
inline BatchedProgram ExpectVmapMatches(const Program& f,
                                        const std::vector<Param>& params,
                                        const std::vector<int>& in_dims,
                                        int64_t batch_size, uint64_t seed = 1) {
  std::string dims_text;
  for (int d : in_dims) dims_text += std::to_string(d) + " ";
  SCOPED_TRACE("in_dims " + dims_text + "batch " + std::to_string(batch_size));
  Result<BatchedProgram> r = Vmap(f, in_dims, batch_size);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  const BatchedProgram& bp = r.value();
  EXPECT_TRUE(bp.program.Verify().ok()) << bp.program.Verify().to_string();
  EXPECT_EQ(bp.output_batched, DependsOnBatched(f, in_dims));

  std::vector<Literal> args;
  uint64_t state = seed;
  for (size_t i = 0; i < params.size(); ++i) {
    const Shape shape = in_dims[i] == -1 ? params[i].type.shape
                                         : InsertDim(params[i].type.shape,
                                                     in_dims[i], batch_size);
    args.push_back(RandomLiteral(params[i], shape, state));
  }
  Result<std::vector<Literal>> out = Interpret(bp.program, args);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return bp;
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    const ValueType want = f.type(f.outputs()[o]);
    const ValueType got = bp.program.type(bp.program.outputs()[o]);
    EXPECT_EQ(got.dtype, want.dtype);
    EXPECT_EQ(got.shape, bp.output_batched[o]
                             ? InsertDim(want.shape, 0, batch_size)
                             : want.shape);
  }
  for (int64_t b = 0; b < batch_size; ++b) {
    std::vector<Literal> example;
    for (size_t i = 0; i < params.size(); ++i) {
      example.push_back(in_dims[i] == -1 ? args[i]
                                         : TakeExample(args[i], in_dims[i], b));
    }
    Result<std::vector<Literal>> want = Interpret(f, example);
    EXPECT_TRUE(want.ok()) << want.status().to_string();
    if (!want.ok()) return bp;
    for (size_t o = 0; o < want.value().size(); ++o) {
      const Literal got = bp.output_batched[o]
                              ? TakeExample(out.value()[o], 0, b)
                              : out.value()[o];
      EXPECT_EQ(got, want.value()[o]) << "output " << o << ", example " << b;
    }
  }
  return bp;
}

// A program that batches f with every parameter and output batched at
// dimension 0 (the convention for call bodies and rules) must match f on
// each example.
inline void ExpectAllBatchedMatches(const Program& batched, const Program& f,
                                    int64_t batch_size, uint64_t seed = 7) {
  ASSERT_EQ(batched.num_parameters(), f.num_parameters());
  ASSERT_EQ(batched.outputs().size(), f.outputs().size());
  EXPECT_TRUE(batched.Verify().ok());
  std::vector<Literal> args;
  uint64_t state = seed;
  for (int i = 0; i < f.num_parameters(); ++i) {
    const ValueType& t = f.parameter_type(i);
    EXPECT_EQ(batched.parameter_type(i).shape,
              InsertDim(t.shape, 0, batch_size));
    args.push_back(
        RandomLiteral({t}, InsertDim(t.shape, 0, batch_size), state));
  }
  Result<std::vector<Literal>> out = Interpret(batched, args);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int64_t b = 0; b < batch_size; ++b) {
    std::vector<Literal> example;
    for (const Literal& a : args) example.push_back(TakeExample(a, 0, b));
    Result<std::vector<Literal>> want = Interpret(f, example);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (size_t o = 0; o < want.value().size(); ++o) {
      EXPECT_EQ(TakeExample(out.value()[o], 0, b), want.value()[o])
          << "output " << o << ", example " << b;
    }
  }
}

// The batch dimension choices for a parameter: unbatched, first, middle,
// last.
inline std::vector<int> DimChoices(const ValueType& type) {
  const int rank = type.shape.rank();
  std::vector<int> choices{-1, 0, rank / 2, rank};
  std::sort(choices.begin(), choices.end());
  choices.erase(std::unique(choices.begin(), choices.end()), choices.end());
  return choices;
}

// ExpectVmapMatches for every combination of DimChoices over the
// parameters (or an evenly spread subset of `max_combinations` of them when
// there are more), with batch sizes 1 and 3.
inline void ExpectVmapMatchesEverywhere(const Program& f,
                                        const std::vector<Param>& params,
                                        int64_t max_combinations = 96) {
  std::vector<std::vector<int>> choices;
  int64_t total = 1;
  for (const Param& p : params) {
    choices.push_back(DimChoices(p.type));
    total *= static_cast<int64_t>(choices.back().size());
  }
  const int64_t count = std::min(total, max_combinations);
  uint64_t seed = 1;
  for (int64_t k = 0; k < count; ++k) {
    int64_t code = k * total / count;  // mixed-radix digits pick the dims
    std::vector<int> in_dims;
    for (const std::vector<int>& c : choices) {
      in_dims.push_back(c[code % static_cast<int64_t>(c.size())]);
      code /= static_cast<int64_t>(c.size());
    }
    for (int64_t batch : {1, 3}) {
      ExpectVmapMatches(f, params, in_dims, batch, seed++);
      if (::testing::Test::HasFailure()) return;  // one failure is enough
    }
  }
}

// Traces `fn` over parameters of the given types.
inline Program Trace(const std::vector<Param>& params,
                     const std::function<std::vector<Tracer>(
                         TraceContext&, const std::vector<Tracer>&)>& fn) {
  TraceContext ctx;
  std::vector<Tracer> args;
  for (const Param& p : params) args.push_back(ctx.AddParameter(p.type));
  return ctx.Finish(fn(ctx, args));
}

// The emitted instructions of a program.
inline int CountKind(const Program& p, OpKind kind) {
  int n = 0;
  for (const Instruction& inst : p.instructions()) n += inst.kind() == kind;
  return n;
}

}  // namespace baton::compiler::batching_test
