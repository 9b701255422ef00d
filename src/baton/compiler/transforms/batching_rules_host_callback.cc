// The batching rule of host callbacks (effects.h): the callback runs once
// per example, in example order, each time with that example's slice of its
// batched operands and its unbatched operands as they are -- as JAX unrolls
// its debug callbacks under vmap, so a print inside vmap prints each
// example's values. The result is the last call's token (unbatched).
#include "baton/compiler/transforms/batching_rules.h"

namespace baton::compiler::transforms::batching {

BatchedValue BatchHostCallback(BatchEmitter& e, const Instruction& inst,
                               const std::vector<BatchedValue>& operands) {
  ValueId token = kNoValue;
  for (int64_t i = 0; i < e.batch_size(); ++i) {
    OperandList args;
    for (const BatchedValue& v : operands) {
      if (!v.batched()) {
        args.push_back(v.id);
        continue;
      }
      const Shape& shape = e.shape(v.id);
      SliceAttrs slice;
      std::vector<int64_t> example_dims;
      for (int d = 0; d < shape.rank(); ++d) {
        const bool b = d == v.bdim;
        slice.start.push_back(b ? i : 0);
        slice.limit.push_back(b ? i + 1 : shape[d]);
        slice.stride.push_back(1);
        if (!b) example_dims.push_back(shape[d]);
      }
      args.push_back(
          e.Reshape(e.Add(std::move(slice), {v.id}), Shape(example_dims)));
    }
    token = e.Add(inst.attrs, std::move(args));
  }
  // An empty batch calls nothing; its token is a constant.
  if (token == kNoValue) token = e.Scalar(DType::kBool, 1);
  return {token, kUnbatched};
}

}  // namespace baton::compiler::transforms::batching
