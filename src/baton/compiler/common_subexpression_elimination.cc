// Common-subexpression elimination with constant de-duplication by content.
//
// One forward pass: each instruction, with its operands already redirected
// to their surviving copies, either matches an earlier survivor (same
// attributes, operands and type) and is replaced by it, or survives. Since
// operands are redirected first, equal chains collapse transitively (two
// equal constants make their broadcasts equal, and so on).
//
// Candidates are found through a hash; equality is always confirmed in full,
// so a collision costs a comparison, never a wrong merge. Constants hash
// their bytes (XXH3) and compare them, so literals captured separately from
// the same host data (distinct Literal objects) become one constant; nothing
// new is ever materialized.
#include <xxhash.h>

#include <cstdint>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include "baton/compiler/effects.h"
#include "baton/compiler/passes.h"

namespace baton::compiler {
namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  // boost::hash_combine's mixing, widened to 64 bits.
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4));
}
uint64_t Mix(uint64_t h, const std::vector<int64_t>& values) {
  h = Mix(h, values.size());
  for (int64_t v : values) h = Mix(h, static_cast<uint64_t>(v));
  return h;
}
uint64_t Mix(uint64_t h, const Shape& shape) { return Mix(h, shape.dims()); }

// A hash of the attributes that are not already implied by the operands and
// the result type (cheap: no literal bytes).
uint64_t HashAttrs(const OpAttrs& attrs) {
  return std::visit(
      [](const auto& a) -> uint64_t {
        using A = std::decay_t<decltype(a)>;
        uint64_t h = 0;
        if constexpr (std::is_same_v<A, UnaryAttrs> ||
                      std::is_same_v<A, BinaryAttrs> ||
                      std::is_same_v<A, CompareAttrs>) {
          h = Mix(h, static_cast<uint64_t>(a.op));
        } else if constexpr (std::is_same_v<A, IotaAttrs>) {
          h = Mix(h, static_cast<uint64_t>(a.dimension));
        } else if constexpr (std::is_same_v<A, BroadcastInDimAttrs>) {
          h = Mix(h, a.broadcast_dimensions);
        } else if constexpr (std::is_same_v<A, TransposeAttrs>) {
          h = Mix(h, a.permutation);
        } else if constexpr (std::is_same_v<A, SliceAttrs>) {
          h = Mix(Mix(Mix(h, a.start), a.limit), a.stride);
        } else if constexpr (std::is_same_v<A, DynamicSliceAttrs>) {
          h = Mix(h, a.slice_sizes);
        } else if constexpr (std::is_same_v<A, ConcatenateAttrs>) {
          h = Mix(h, static_cast<uint64_t>(a.dimension));
        } else if constexpr (std::is_same_v<A, GatherAttrs>) {
          h = Mix(Mix(Mix(h, static_cast<uint64_t>(a.axis)),
                      (uint64_t{a.bounds.wrap_negative} << 1) |
                          uint64_t{a.bounds.fill}),
                  a.bounds.fill_bits);
        } else if constexpr (std::is_same_v<A, SortAttrs>) {
          h = Mix(Mix(Mix(h, static_cast<uint64_t>(a.dimension)),
                      static_cast<uint64_t>(a.descending)),
                  static_cast<uint64_t>(a.indices));
        } else if constexpr (std::is_same_v<A, LinalgAttrs>) {
          const uint64_t flags =
              (uint64_t{a.lower} << 0) | (uint64_t{a.transpose_a} << 1) |
              (uint64_t{a.left_side} << 2) | (uint64_t{a.unit_diagonal} << 3) |
              (uint64_t{a.full_matrices} << 4);
          h = Mix(Mix(h, static_cast<uint64_t>(a.kind)), flags);
        } else if constexpr (std::is_same_v<A, PadAttrs>) {
          h = Mix(Mix(Mix(h, a.low), a.high), a.interior);
        } else if constexpr (std::is_same_v<A, ScatterAttrs>) {
          h = Mix(Mix(h, static_cast<uint64_t>(a.axis)),
                  static_cast<uint64_t>(a.mode));
        } else if constexpr (std::is_same_v<A, ReduceAttrs>) {
          h = Mix(Mix(h, static_cast<uint64_t>(a.op)), a.axes);
        } else if constexpr (std::is_same_v<A, DotGeneralAttrs>) {
          h = Mix(Mix(Mix(Mix(h, a.lhs_batch), a.rhs_batch), a.lhs_contracting),
                  a.rhs_contracting);
        }
        // Others (convert, select, reshape, dynamic_update_slice, transfer)
        // are determined by operands and result type.
        return h;
      },
      attrs);
}

uint64_t HashType(uint64_t h, const ValueType& type) {
  return Mix(Mix(Mix(h, type.shape), static_cast<uint64_t>(type.dtype)),
             static_cast<uint64_t>(type.memory_kind));
}

bool SameConstant(const Literal& a, const Literal& b) {
  return &a == &b || a == b;
}

}  // namespace

Program EliminateCommonSubexpressions(const Program& program) {
  const int n = program.num_values();
  Program out;
  std::vector<ValueId> remap(n, kNoValue);
  // Hash -> surviving ValueIds of `out` with that hash.
  std::unordered_map<uint64_t, std::vector<ValueId>> buckets;

  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = program.instruction(v);
    if (inst.kind() == OpKind::kParameter) {
      // Parameters are the calling convention: never merged.
      remap[v] = out.AddParameter(inst.type).value();
      continue;
    }
    OperandList operands;
    for (ValueId o : inst.operands) operands.push_back(remap[o]);
    if (HasSideEffect(inst.attrs)) {
      // Two prints of one value print twice: never merged, nor merged into.
      remap[v] = out.Add(inst.attrs, operands).value();
      continue;
    }

    uint64_t h =
        Mix(HashType(0, inst.type), static_cast<uint64_t>(inst.kind()));
    const auto* constant = inst.attrs_if<ConstantAttrs>();
    if (constant != nullptr) {
      const Literal& lit = *constant->literal;
      h = Mix(h, XXH3_64bits(lit.untyped_data(),
                             static_cast<size_t>(lit.byte_size())));
    } else {
      h = Mix(h, HashAttrs(inst.attrs));
      for (ValueId o : operands) h = Mix(h, static_cast<uint64_t>(o));
    }

    std::vector<ValueId>& bucket = buckets[h];
    ValueId match = kNoValue;
    for (ValueId c : bucket) {
      const Instruction& cand = out.instruction(c);
      if (cand.kind() != inst.kind() || !(cand.type == inst.type)) continue;
      const bool equal =
          constant != nullptr
              ? SameConstant(*cand.attrs_as<ConstantAttrs>().literal,
                             *constant->literal)
              : cand.operands == operands && cand.attrs == inst.attrs;
      if (equal) {
        match = c;
        break;
      }
    }
    if (match != kNoValue) {
      remap[v] = match;
      continue;
    }
    // Re-adding checked instructions of a valid program cannot fail.
    remap[v] = out.Add(inst.attrs, operands).value();
    bucket.push_back(remap[v]);
  }

  std::vector<ValueId> outputs;
  for (ValueId o : program.outputs()) outputs.push_back(remap[o]);
  (void)out.SetOutputs(std::move(outputs));
  return out;
}

}  // namespace baton::compiler
