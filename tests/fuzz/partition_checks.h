// What the compiler fuzzers check of jit's partitioning of a program over a
// mesh (compiler/spmd_partitioner.h, as jit of sharded arguments runs it):
// with its parameters laid out by a seeded choice over a mesh of 2 or 2 x 2
// devices (each dimension split by an axis that divides it, or whole), the
// partitioned program is either refused with a message (InvalidArgument
// only for a sharding constraint the mesh does not allow; Unimplemented) or
// made;
// the reference SPMD interpreter (compiler/spmd_interpreter.h) then runs it
// on every device's blocks and its outputs -- assembled, every copy of a
// replicated block equal -- are the program's own, bitwise where no
// reduction or dot may round differently (an all-reduce adds the devices'
// parts in another order).
// Called by CheckProgram once the interpreter has run the program. Included
// by program_checks.h, after the helpers it uses (FuzzFail, SameValues,
// MayRoundDifferently).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/compiler/passes.h"
#include "baton/compiler/spmd_interpreter.h"
#include "baton/compiler/spmd_partitioner.h"

namespace baton::fuzz {

// A layout of each parameter of `p` over `mesh`, from `seed`: per
// dimension, whole or split by one unused axis that divides it.
inline std::vector<c::Sharding> SeededShardings(const c::Program& p,
                                                const c::DeviceMesh& mesh,
                                                uint32_t seed) {
  std::vector<c::Sharding> out;
  for (int i = 0; i < p.num_parameters(); ++i) {
    const Shape& shape = p.parameter_type(i).shape;
    c::Sharding s = c::Sharding::Replicated(shape.rank());
    std::vector<bool> used(mesh.axis_sizes.size(), false);
    for (int d = 0; d < shape.rank(); ++d) {
      seed = seed * 1664525u + 1013904223u;
      if ((seed >> 24) % 4 == 0) continue;  // whole now and then
      for (size_t a = 0; a < mesh.axis_sizes.size(); ++a) {
        const size_t axis = (a + (seed >> 16)) % mesh.axis_sizes.size();
        if (used[axis] || shape.dim(d) == 0 ||
            shape.dim(d) % mesh.axis_sizes[axis] != 0) {
          continue;
        }
        used[axis] = true;
        s.dims[d] = {static_cast<int>(axis)};
        break;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

inline void CheckPartitioned(const c::Program& p,
                             const std::vector<c::Literal>& args,
                             const std::vector<c::Literal>& want,
                             uint32_t seed) {
  const c::DeviceMesh mesh = seed & 1 ? c::DeviceMesh{{"a", "b"}, {2, 2}}
                                      : c::DeviceMesh{{"i"}, {2}};
  const c::Program inlined = c::InlineCalls(p, /*keep_sharding_constraints=*/true);
  const std::vector<c::Sharding> layouts = SeededShardings(inlined, mesh, seed);
  Result<c::SpmdProgram> sp = c::PartitionForMesh(inlined, mesh, layouts);
  if (!sp.ok()) {
    // With valid parameter layouts, the one bad input is a sharding
    // constraint the mesh cannot hold.
    if (sp.status().code() == ErrorCode::kInvalidArgument &&
        sp.status().message().find("with_sharding_constraint") ==
            std::string::npos) {
      FuzzFail("PartitionForMesh refused a verified program: " +
                   sp.status().to_string(),
               &p);
    }
    return CheckRefusal(sp.status(), "PartitionForMesh", p);
  }
  Result<std::vector<c::Literal>> got = c::InterpretSpmd(sp.value(), args);
  if (!got.ok()) {
    FuzzFail("the partitioned program failed: " + got.status().to_string() +
                 "\n" + sp.value().ToText(),
             &p);
  }
  if (got.value().size() != want.size()) {
    FuzzFail("the partitioned program returned " +
                 std::to_string(got.value().size()) + " outputs for " +
                 std::to_string(want.size()),
             &p);
  }
  std::vector<bool> inexact;
  MayRoundDifferently(inlined, &inexact);
  for (size_t i = 0; i < want.size(); ++i) {
    const c::Literal& g = got.value()[i];
    if (g.shape() != want[i].shape() || g.dtype() != want[i].dtype()) {
      FuzzFail("partitioned output " + std::to_string(i) +
                   " is not of the program's type",
               &p);
    }
    if (!inexact[inlined.outputs()[i]] && !SameValues(g, want[i])) {
      FuzzFail("partitioned output " + std::to_string(i) + " is " +
                   g.ToString() + ", the program's " + want[i].ToString() +
                   "\n" + sp.value().ToText(),
               &p);
    }
  }
}

}  // namespace baton::fuzz
