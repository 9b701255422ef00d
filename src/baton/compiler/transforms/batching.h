// Batching (bt.vmap): a Program over one example becomes a Program over a
// batch of `batch_size` examples.
//
//   Vmap(f, in_dims, n): parameter i of the result has f's parameter type
//   with a dimension of size n inserted at in_dims[i] (in_dims[i] == -1:
//   unbatched, f's type). Each output is either batched, with the batch
//   dimension first (dimension 0), or unbatched (its type in f), as
//   output_batched says: an output is unbatched exactly when it does not
//   depend on any batched parameter. Callers move or broadcast the batch
//   dimension as out_axes asks.
//
// Each op has a batching rule that keeps the batch dimension wherever it is
// cheapest and moves it only where an op needs it in a given place; ops
// whose operands are all unbatched are copied as they are. Calls are batched
// by batching their body and rules (custom rules and checkpoint policies
// survive, so grad of vmap and vmap of grad both work).
//
// Errors: InvalidArgument for an in_dims entry out of range or a batch size
// that disagrees; Unimplemented naming the op for an op without a batching
// rule (never a wrong answer). Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler::transforms {

struct BatchedProgram {
  Program program;
  std::vector<bool> output_batched;
};

Result<BatchedProgram> Vmap(const Program& program,
                            const std::vector<int>& in_dims,
                            int64_t batch_size);

}  // namespace baton::compiler::transforms
