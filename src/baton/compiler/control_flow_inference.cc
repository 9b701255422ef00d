// Type inference for the control-flow ops (declared in shape_inference.h).
#include <string>

#include "baton/compiler/ir.h"
#include "baton/compiler/shape_inference.h"

namespace baton::compiler {
namespace {

bool SameType(const ValueType& a, const ValueType& b) {
  return a.shape == b.shape && a.dtype == b.dtype;
}

std::string N(int64_t i) { return std::to_string(i); }

// `region`'s parameters must be `want`, in order.
Status CheckParameters(const char* op, const char* region, const Program* p,
                       const std::vector<ValueType>& want) {
  if (p == nullptr) return InvalidArgument(std::string(op) + ": no " + region);
  if (p->num_parameters() != static_cast<int>(want.size())) {
    return InvalidArgument(std::string(op) + ": the " + region + " takes " +
                           N(p->num_parameters()) + " values, but gets " +
                           N(want.size()));
  }
  for (int i = 0; i < p->num_parameters(); ++i) {
    if (!SameType(p->parameter_type(i), want[i])) {
      return InvalidArgument(std::string(op) + ": the " + region +
                             "'s parameter " + N(i) + " is " +
                             TypeForMessage(p->parameter_type(i)) +
                             ", but its value is " + TypeForMessage(want[i]));
    }
  }
  return OkStatus();
}

Status CheckIndex(const char* op, int index, int n) {
  if (index < 0 || index >= n) {
    return InvalidArgument(std::string(op) + ": output_index " + N(index) +
                           " is out of range for " + N(n) + " results");
  }
  return OkStatus();
}

}  // namespace

Result<ValueType> InferWhileType(const WhileAttrs& a,
                                 std::span<const ValueType> operands) {
  const char* op = "while";
  if (a.num_carries < 1 || a.num_carries > static_cast<int>(operands.size())) {
    return InvalidArgument("while: needs 1 to " + N(operands.size()) +
                           " carries, got " + N(a.num_carries));
  }
  std::vector<ValueType> params(operands.begin(), operands.end());
  BATON_RETURN_IF_ERROR(CheckParameters(op, "condition", a.cond.get(), params));
  BATON_RETURN_IF_ERROR(CheckParameters(op, "body", a.body.get(), params));
  if (a.cond->outputs().size() != 1 ||
      !SameType(a.cond->output_types()[0], ValueType{Shape{}, DType::kBool})) {
    return InvalidArgument(
        "while: the condition must return one bool scalar, it returns " +
        N(a.cond->outputs().size()) + " values" +
        (a.cond->outputs().empty()
             ? std::string()
             : ", the first " + TypeForMessage(a.cond->output_types()[0])));
  }
  if (static_cast<int>(a.body->outputs().size()) != a.num_carries) {
    return InvalidArgument("while: the body must return the " +
                           N(a.num_carries) + " carries, it returns " +
                           N(a.body->outputs().size()) + " values");
  }
  for (int i = 0; i < a.num_carries; ++i) {
    const ValueType t = a.body->type(a.body->outputs()[i]);
    if (!SameType(t, operands[i])) {
      return InvalidArgument("while: the body's carry " + N(i) + " is " +
                             TypeForMessage(t) + " but enters the loop as " +
                             TypeForMessage(operands[i]) +
                             "; a carry keeps its shape and dtype");
    }
  }
  BATON_RETURN_IF_ERROR(CheckIndex(op, a.output_index, a.num_carries));
  return ValueType{operands[a.output_index].shape,
                   operands[a.output_index].dtype};
}

Result<ValueType> InferScanType(const ScanAttrs& a,
                                std::span<const ValueType> operands) {
  const char* op = "scan";
  if (a.num_carries < 0 || a.num_xs < 0 ||
      a.num_carries + a.num_xs > static_cast<int>(operands.size())) {
    return InvalidArgument("scan: " + N(a.num_carries) + " carries and " +
                           N(a.num_xs) + " xs do not fit " +
                           N(operands.size()) + " operands");
  }
  if (a.length < 0) return InvalidArgument("scan: negative length");
  std::vector<ValueType> params(operands.begin(), operands.end());
  for (int j = 0; j < a.num_xs; ++j) {
    const ValueType& x = operands[a.num_carries + j];
    if (x.shape.rank() < 1 || x.shape[0] != a.length) {
      return InvalidArgument("scan: xs " + N(j) + " is " + TypeForMessage(x) +
                             ", but the scan's length is " + N(a.length) +
                             "; every xs needs a leading dimension of that size");
    }
    std::vector<int64_t> dims(x.shape.dims().begin() + 1, x.shape.dims().end());
    params[a.num_carries + j] = ValueType{Shape(dims), x.dtype};
  }
  BATON_RETURN_IF_ERROR(CheckParameters(op, "body", a.body.get(), params));
  const int n_out = static_cast<int>(a.body->outputs().size());
  if (n_out < a.num_carries) {
    return InvalidArgument("scan: the body must return the " +
                           N(a.num_carries) + " carries first, it returns " +
                           N(n_out) + " values");
  }
  for (int i = 0; i < a.num_carries; ++i) {
    const ValueType t = a.body->type(a.body->outputs()[i]);
    if (!SameType(t, operands[i])) {
      return InvalidArgument("scan: the body's carry " + N(i) + " is " +
                             TypeForMessage(t) + " but enters the loop as " +
                             TypeForMessage(operands[i]) +
                             "; a carry keeps its shape and dtype");
    }
  }
  BATON_RETURN_IF_ERROR(CheckIndex(op, a.output_index, n_out));
  const ValueType t = a.body->type(a.body->outputs()[a.output_index]);
  if (a.output_index < a.num_carries) return ValueType{t.shape, t.dtype};
  std::vector<int64_t> dims{a.length};
  dims.insert(dims.end(), t.shape.dims().begin(), t.shape.dims().end());
  return ValueType{Shape(dims), t.dtype};
}

Result<ValueType> InferCaseType(const CaseAttrs& a,
                                std::span<const ValueType> operands) {
  const char* op = "case";
  if (a.branches.empty()) return InvalidArgument("case: no branches");
  if (operands.empty() ||
      !SameType(operands[0], ValueType{Shape{}, DType::kInt32})) {
    return InvalidArgument(
        "case: the branch index must be an int32 scalar" +
        (operands.empty() ? std::string()
                          : ", got " + TypeForMessage(operands[0])));
  }
  std::vector<ValueType> params(operands.begin() + 1, operands.end());
  const Program* first = a.branches[0].get();
  for (size_t b = 0; b < a.branches.size(); ++b) {
    const std::string region = "branch " + N(b);
    BATON_RETURN_IF_ERROR(
        CheckParameters(op, region.c_str(), a.branches[b].get(), params));
    const Program& p = *a.branches[b];
    if (p.outputs().size() != first->outputs().size()) {
      return InvalidArgument("case: branch " + N(b) + " returns " +
                             N(p.outputs().size()) + " values, branch 0 " +
                             N(first->outputs().size()));
    }
    for (size_t i = 0; i < p.outputs().size(); ++i) {
      const ValueType t = p.type(p.outputs()[i]);
      const ValueType t0 = first->type(first->outputs()[i]);
      if (!SameType(t, t0)) {
        return InvalidArgument("case: output " + N(i) + " of branch " + N(b) +
                               " is " + TypeForMessage(t) + ", of branch 0 " +
                               TypeForMessage(t0) +
                               "; all branches must return the same types");
      }
    }
  }
  BATON_RETURN_IF_ERROR(
      CheckIndex(op, a.output_index, static_cast<int>(first->outputs().size())));
  const ValueType t = first->type(first->outputs()[a.output_index]);
  return ValueType{t.shape, t.dtype};
}

}  // namespace baton::compiler
