// EmitContext: what the per-op emitters (emit_*.cc) build kernels with --
// the type names, argument binding, index arithmetic and the growing
// EmittedProgram -- so that each emitter only says what its op computes.
//
// A kernel is written as the body of
//     BATON_FN void <name>_body(idx i, const KernelArgs& a)
// for work item `i` (0 <= i < threads); Finish() wraps it in the device
// grid-stride loop (or, under BATON_HOST_EMULATION, a host loop) and
// records the launch action. `idx`, the type of every index and offset in
// a body, is declared by Finish: bt::i32 when the work items and every
// buffer the kernel binds fit in 2^31 (elements and bytes), else bt::i64
// (64-bit division and remainder are emulated on a GPU: several times the
// instructions, and about twice the NVRTC compile time). Pointers are bound with Kernel::Arg: each
// distinct BufferRef gets one slot of a.p.
//
// Typical use (an elementwise negate of value `x` into step result `r`):
//     EmitContext::Kernel k = ctx.NewKernel(n);
//     k.body += "  " + ctx.Store(k, r, "i",
//         "bt::from_compute<float>(bt::unary<bt::unary_op::kNeg, float>("
//         "bt::to_compute(" + ctx.Load(k, x, "i") + ")))") + "\n";
//     BATON_RETURN_IF_ERROR(ctx.Finish(std::move(k)));
//
// Ownership: refers to the program, plan and output it was made with, which
// must outlive it. Not thread-safe (one emission at a time).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"

namespace baton::cuda::codegen {

class EmitContext {
 public:
  EmitContext(const compiler::Program& program, const compiler::StepPlan& plan,
              const EmitOptions& options, const std::string& name,
              EmittedProgram* out);

  const compiler::Program& program() const { return program_; }
  const compiler::StepPlan& plan() const { return plan_; }
  const EmitOptions& options() const { return options_; }
  const std::string& name() const { return name_; }
  // The step being emitted (set by EmitProgram before each step).
  int step_index() const { return step_index_; }
  void BeginStep(int step_index);

  // C++ names in the emitted source: the storage type of `dtype` ("bool",
  // "bt::i32", "bt::f16", "float", ...) and its compute type ("float" for
  // float16/bfloat16, else the storage type).
  static std::string StorageType(DType dtype);
  static std::string ComputeType(DType dtype);
  // An integer literal that is valid C++ for any int64_t
  // ("(-9223372036854775807LL-1)").
  static std::string Int(int64_t v);
  // The storage-type element of `dtype` whose bits are the low bytes of
  // `bits` (a gather's fill value, core/gather_bounds.h), as an expression.
  static std::string ElementOfBits(DType dtype, uint64_t bits);
  // Statements reading gather index expression `index` into a dimension of
  // `d` >= 1 elements as `bounds` says (GatherBounds::Position): they
  // declare `idx <name>`, the position to read (clamped into [0, d)), and
  // with bounds.fill `bool <name>_inside`, false where the fill is read.
  static std::string GatherPosition(const std::string& name,
                                    const std::string& index, int64_t d,
                                    const GatherBounds& bounds);

  struct Kernel {
    std::string name;
    int64_t threads = 0;
    std::vector<BufferRef> args;
    std::string body;  // statements; the work item is `i` (an idx)
    int temps = 0;
    // The a.p slot of `ref`, binding it on first use.
    int Arg(const BufferRef& ref);
    // A fresh local name ("t0", "t1", ...).
    std::string Temp();
  };
  // A new kernel over `threads` work items (may be 0: Finish then records
  // nothing).
  Kernel NewKernel(int64_t threads);
  // Appends the kernel's source (unless a kernel of the same text is there
  // already: then that one is launched) and its launch action.
  // Unimplemented when it binds more than kMaxKernelArgs pointers.
  Status Finish(Kernel kernel);
  // Forgets the kernels from index `count` on, which the caller has cut
  // from the output (a step refused part way, EmitOptions::host_fallback).
  void ForgetKernelsFrom(size_t count);

  // A copy action (skipped at run time when dst and src are one storage).
  void Copy(const BufferRef& dst, const BufferRef& src, int64_t bytes);
  // A kGemm action.
  void Gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
            const BufferRef& a, const BufferRef& b, const BufferRef& c,
            bool trans_a, bool trans_b);
  // Reserves `bytes` of this step's scratch (256-byte aligned) and returns
  // its reference.
  BufferRef Scratch(int64_t bytes);

  // The storage of value `v`: its own slot, or for a virtual scalar
  // (plan().scalar_source) the slot of the one-element value it broadcasts.
  BufferRef Value(compiler::ValueId v) const;
  // Whether `v` is a virtual scalar (read element 0 of Value(v)).
  bool IsVirtualScalar(compiler::ValueId v) const;

  // Expressions over kernel `k`:
  // element `index` of value `v`, as its storage type (a virtual scalar
  // reads element 0 whatever the index);
  std::string Load(Kernel& k, compiler::ValueId v, const std::string& index);
  // element `index` of a buffer holding `dtype` elements;
  std::string LoadRef(Kernel& k, const BufferRef& ref, DType dtype,
                      const std::string& index);
  // the statement storing `expr` (storage type) at element `index` of `v`
  // (or of `ref`), with the trailing ';'.
  std::string Store(Kernel& k, compiler::ValueId v, const std::string& index,
                    const std::string& expr);
  std::string StoreRef(Kernel& k, const BufferRef& ref, DType dtype,
                       const std::string& index, const std::string& expr);
  // A typed pointer expression: "((const float*)a.p[2])" / "((float*)a.p[2])".
  std::string Pointer(Kernel& k, const BufferRef& ref, DType dtype,
                      bool writable);

  // Statements declaring `idx <prefix>0 .. <prefix>{rank-1}`, the
  // row-major coordinates of linear index `linear` in `dims`.
  static std::string Unravel(const std::vector<int64_t>& dims,
                             const std::string& linear,
                             const std::string& prefix);
  // Row-major strides of `dims` (elements).
  static std::vector<int64_t> Strides(const std::vector<int64_t>& dims);

  // Unimplemented "<name>: <what> does not run on CUDA yet: <why>".
  Status NotOnCuda(const std::string& what, const std::string& why) const;

 private:
  const compiler::Program& program_;
  const compiler::StepPlan& plan_;
  const EmitOptions& options_;
  const std::string& name_;
  EmittedProgram* out_;
  int step_index_ = -1;
  // The step's scratch reservations: offset -> bytes.
  std::map<int64_t, int64_t> scratch_bytes_;
  // Kernels made so far (their numbers), and the emitted ones by text.
  int next_kernel_ = 0;
  std::unordered_map<std::string, int> kernel_by_text_;

  // Records the launch of kernel `index` over `kernel`'s work items.
  void Launch(int index, Kernel& kernel);

  // Whether `kernel` needs 64-bit indices (see the top of this file).
  bool WideIndex(const Kernel& kernel) const;
};

// The per-family emitters, each for one plan step (emit_*.cc); EmitProgram
// (kernel_emitter.cc) dispatches by step kind and op.
// emit_elementwise.cc: kOp steps of elementwise ops and table gathers,
// kFusedElementwise steps, iota, convert.
Status EmitElementwiseStep(EmitContext& ctx, const compiler::Step& step);
// emit_reduce.cc: kReduce ops and kFusedReduce steps.
Status EmitReduceStep(EmitContext& ctx, const compiler::Step& step);
// emit_dot.cc: dot_general.
Status EmitDotStep(EmitContext& ctx, const compiler::Step& step);
// emit_shape_ops.cc: broadcast_in_dim, transpose, slice, dynamic_slice,
// dynamic_update_slice, concatenate, pad, gather (general), scatter,
// reshape and transfer copies.
Status EmitShapeStep(EmitContext& ctx, const compiler::Step& step);

}  // namespace baton::cuda::codegen
