// The compiler's SSA IR: a Program is an ordered list of Instructions, each
// producing exactly one value named by its index (ValueId).
//
// Walking a program, as passes do:
//
//   for (ValueId id = 0; id < program.num_values(); ++id) {
//     const Instruction& inst = program.instruction(id);
//     inst.kind();        // OpKind
//     inst.operands;      // ValueIds, all < id (defined before use)
//     inst.type;          // shape, dtype, memory kind of value `id`
//     if (auto* c = inst.attrs_if<ConstantAttrs>()) c->literal ...
//   }
//
// Parameters and constants are instructions like any other (no operands);
// parameter i's ValueId is program.parameter(i). outputs() lists the values
// the program returns, in order; an output may repeat or be a parameter.
//
// Ownership: a Program owns its instructions; constants inside are shared
// (std::shared_ptr<const Literal>). Thread-safety: building (Add*,
// SetOutputs) is single-threaded; a finished Program is immutable and may be
// shared and read from any number of threads (hold it as
// std::shared_ptr<const Program>).
#pragma once

#include <span>
#include <vector>

#include "baton/compiler/op_attrs.h"
#include "baton/compiler/operand_list.h"
#include "baton/compiler/value_type.h"
#include "baton/core/status.h"

namespace baton::compiler {

// One operation and the value it produces.
struct Instruction {
  OpAttrs attrs;
  OperandList operands;
  ValueType type;  // of the value this instruction produces

  OpKind kind() const { return KindOf(attrs); }
  // The attributes as their concrete struct; the kind must match.
  template <typename A>
  const A& attrs_as() const {
    return std::get<A>(attrs);
  }
  // nullptr when the kind does not match.
  template <typename A>
  const A* attrs_if() const {
    return std::get_if<A>(&attrs);
  }
};

class Program {
 public:
  Program() = default;

  // Building. Each appends one instruction and returns its ValueId; types
  // are inferred (shape_inference.h) and a bad op is rejected with the
  // inference error, leaving the program unchanged.

  // Appends parameter number num_parameters() of the given type.
  Result<ValueId> AddParameter(ValueType type);
  // Appends any op. Operands must already exist. A ParameterAttrs must carry
  // index == num_parameters().
  Result<ValueId> Add(OpAttrs attrs, OperandList operands);
  // Sets the returned values (each must exist).
  Status SetOutputs(std::vector<ValueId> outputs);

  // Reading.
  int num_values() const { return static_cast<int>(instructions_.size()); }
  const std::vector<Instruction>& instructions() const { return instructions_; }
  const Instruction& instruction(ValueId id) const { return instructions_[id]; }
  const ValueType& type(ValueId id) const { return instructions_[id].type; }

  int num_parameters() const { return static_cast<int>(parameters_.size()); }
  // ValueId of parameter `index`.
  ValueId parameter(int index) const { return parameters_[index]; }
  const std::vector<ValueId>& parameters() const { return parameters_; }
  const ValueType& parameter_type(int index) const {
    return type(parameters_[index]);
  }
  std::vector<ValueType> parameter_types() const;

  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::vector<ValueType> output_types() const;

  // Re-checks every invariant: operands defined before use, each type equal
  // to what inference gives, parameters dense, outputs in range. For passes
  // that build programs in ways Add does not check (none today) and tests.
  Status Verify() const;

 private:
  Status CheckOperands(const OpAttrs& attrs, const OperandList& operands,
                       ValueId limit) const;

  std::vector<Instruction> instructions_;
  std::vector<ValueId> parameters_;  // parameter index -> ValueId
  std::vector<ValueId> outputs_;
};

}  // namespace baton::compiler
