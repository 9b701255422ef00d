#include "baton/compiler/passes.h"

namespace baton::compiler {

Program Optimize(const Program& program) { return EliminateDeadCode(program); }

}  // namespace baton::compiler
