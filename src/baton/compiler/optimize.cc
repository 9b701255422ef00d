#include "baton/compiler/passes.h"

namespace baton::compiler {

Program Optimize(const Program& program) {
  // CSE never leaves dead code behind (a dropped duplicate's operands are
  // used by the copy that survives); folding leaves the transposes it read
  // through, so one DCE at the end is enough.
  return EliminateDeadCode(FoldTransposesIntoDots(
      EliminateCommonSubexpressions(InlineCalls(program))));
}

}  // namespace baton::compiler
