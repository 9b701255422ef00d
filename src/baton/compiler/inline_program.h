// Inlining one program into another: how a transformed or sub-traced program
// becomes part of the program that uses it, and how calls disappear before
// planning.
//
// Thread-safety: pure functions of their arguments (the destination is
// written by the calling thread only).
#pragma once

#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/tracer.h"

namespace baton::compiler {

// Appends `src`'s instructions to `dst` with src's parameter i bound to
// args[i] (values of dst, of the parameter's shape and dtype) and returns
// the dst values of src's outputs, in order. `expand_calls`: calls inside
// src are replaced by their bodies (recursively); otherwise they are copied.
// Expanded sharding constraints (bodiless identities) are dropped unless
// `keep_sharding_constraints`.
//
// Errors: InvalidArgument for a wrong number of arguments or a mismatched
// type (the inference error of the first instruction that rejects them).
Result<std::vector<ValueId>> InlineInto(Program& dst, const Program& src,
                                        const std::vector<ValueId>& args,
                                        bool expand_calls = false,
                                        bool keep_sharding_constraints = false);

// The same while tracing: re-emits `src` into `ctx` (throws
// InvalidArgumentError like every tracer function). Sharding constraints
// are kept: a traced program keeps what the user asked for, and compiling
// it decides (passes.h InlineCalls).
std::vector<Tracer> InlineProgram(TraceContext& ctx, const Program& src,
                                  const std::vector<Tracer>& args,
                                  bool expand_calls = false);

}  // namespace baton::compiler
