#include "baton/compiler/passes.h"

namespace baton::compiler {

Program Optimize(const Program& program) {
  // CSE never leaves dead code behind (a dropped duplicate's operands are
  // used by the copy that survives), so one DCE after it is enough.
  return EliminateDeadCode(
      EliminateCommonSubexpressions(InlineCalls(program)));
}

}  // namespace baton::compiler
