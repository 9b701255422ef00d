// Program-to-program passes run before planning a compiled program.
//
// Each is a pure Program -> Program function that keeps the calling
// convention: the same parameters, in order, and the same outputs (which may
// come to name the same value more than once). None materializes new data:
// no constant folding, so a program never grows a large constant it did not
// capture.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include "baton/compiler/ir.h"

namespace baton::compiler {

// What dead-code elimination does with side effects (effects.h): keeps
// them, as every pass must when the program is to run, or drops those no
// output depends on, for computing a value without running the program's
// effects (bool() of a traced value).
enum class Effects : uint8_t { kKeep, kDrop };

// Removes instructions no output depends on (parameters always stay, so the
// calling convention does not change), except side effects under
// Effects::kKeep.
Program EliminateDeadCode(const Program& program,
                          Effects effects = Effects::kKeep);

// Merges instructions that compute the same value: equal attributes and
// equal operands (after merging), so equal chains collapse; side effects
// are never merged. Constants are
// merged by content -- same dtype, shape and bytes, even in distinct Literal
// objects -- so a host array captured many times is one constant. Parameters
// are never merged. Operand order matters (a + b and b + a stay distinct).
Program EliminateCommonSubexpressions(const Program& program);

// Replaces every call by its body (inline_program.h), recursively; the
// custom rules and checkpoint policies of calls matter only to the
// transformations, which run before this. A program without calls is
// returned as it is. Sharding constraints (CallKind::kShardingConstraint)
// are dropped -- one device computes the whole value -- unless
// `keep_sharding_constraints` (the SPMD partitioner, which lays values out).
Program InlineCalls(const Program& program,
                    bool keep_sharding_constraints = false);

// Lets each dot_general read a transposed operand in place: an operand made
// by a transpose is replaced by the transpose's operand, its dimensions
// mapped, where the result keeps its order and the GEMM reads that operand
// without a copy (transpose_folding.cc says when). `x @ w.T` then copies no
// w. The transposes stay for their other users; dead-code elimination
// drops the rest.
Program FoldTransposesIntoDots(const Program& program);

// The passes a program goes through before buffer assignment, in order:
// call inlining, common-subexpression elimination, transpose folding,
// dead-code elimination.
Program Optimize(const Program& program);

}  // namespace baton::compiler
