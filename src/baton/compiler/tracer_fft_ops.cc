// fft_ops.h: the fft op.
#include "baton/compiler/fft_ops.h"

#include "baton/compiler/tracer_internal.h"

namespace baton::compiler {

using tracer_internal::CommonContext;

Tracer fft(const Tracer& x, FftType type, std::vector<int64_t> lengths) {
  TraceContext& ctx = CommonContext(fft_type_name(type), {&x});
  // Type inference (InferFft) checks the dtype and the lengths and names
  // what is wrong.
  return ctx.Emit(FftAttrs{type, std::move(lengths)}, {x});
}

}  // namespace baton::compiler
