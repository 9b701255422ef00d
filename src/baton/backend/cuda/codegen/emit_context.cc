#include "baton/backend/cuda/codegen/emit_context.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace baton::cuda::codegen {

using compiler::ValueId;

namespace {
constexpr int64_t kScratchAlignment = 256;
}  // namespace

EmitContext::EmitContext(const compiler::Program& program,
                         const compiler::StepPlan& plan,
                         const EmitOptions& options, const std::string& name,
                         EmittedProgram* out)
    : program_(program),
      plan_(plan),
      options_(options),
      name_(name),
      out_(out) {
  out_->step_scratch_bytes.assign(plan_.steps.size(), 0);
}

void EmitContext::BeginStep(int step_index) {
  step_index_ = step_index;
  scratch_bytes_.clear();
}

bool EmitContext::WideIndex(const Kernel& kernel) const {
  if (options_.index_bits == 64) return true;
  // Every index expression a kernel computes is a work item or an element
  // offset inside one of its buffers (or a partial sum of one), so the
  // largest of these bounds them all; bytes bound elements.
  int64_t extent = kernel.threads;
  for (const BufferRef& ref : kernel.args) {
    int64_t bytes = 0;
    if (ref.kind == BufferRef::Kind::kSlot) {
      bytes = program_.type(static_cast<ValueId>(ref.index)).byte_size();
    } else {
      const auto it = scratch_bytes_.find(ref.index);
      bytes = it == scratch_bytes_.end() ? INT64_MAX : it->second;
    }
    extent = std::max(extent, bytes);
  }
  return extent > INT32_MAX;
}

std::string EmitContext::StorageType(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "bool";
    case DType::kInt8:
      return "bt::i8";
    case DType::kInt16:
      return "bt::i16";
    case DType::kInt32:
      return "bt::i32";
    case DType::kInt64:
      return "bt::i64";
    case DType::kUInt8:
      return "bt::u8";
    case DType::kUInt32:
      return "bt::u32";
    case DType::kFloat16:
      return "bt::f16";
    case DType::kBFloat16:
      return "bt::bf16";
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kComplex64:
    case DType::kComplex128:
      break;  // refused before emitting (kernel_emitter.cc)
  }
  return "void";
}

std::string EmitContext::ComputeType(DType dtype) {
  if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) return "float";
  return StorageType(dtype);
}

std::string EmitContext::ElementOfBits(DType dtype, uint64_t bits) {
  auto hex = [](uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llxull",
                  static_cast<unsigned long long>(v));
    return std::string(text);
  };
  switch (dtype) {
    case DType::kBool:
      return (bits & 0xff) != 0 ? "true" : "false";
    case DType::kFloat16:
      return "bt::f16{(bt::u16)" + hex(bits & 0xffff) + "}";
    case DType::kBFloat16:
      return "bt::bf16{(bt::u16)" + hex(bits & 0xffff) + "}";
    case DType::kFloat32:
      return "bt::from_bits((bt::u32)" + hex(bits & 0xffffffffu) + ")";
    case DType::kFloat64:
      return "bt::from_bits((bt::u64)" + hex(bits) + ")";
    default:  // integers: the value, through the storage type's cast
      return "((" + StorageType(dtype) + ")" + hex(bits) + ")";
  }
}

std::string EmitContext::GatherPosition(const std::string& name,
                                        const std::string& index, int64_t d,
                                        const GatherBounds& bounds) {
  std::string s = "  bt::i64 " + name + "_raw = (bt::i64)(" + index + ");\n";
  if (bounds.wrap_negative) {
    s += "  if (" + name + "_raw < 0) " + name + "_raw += " + Int(d) + ";\n";
  }
  if (bounds.fill) {
    s += "  const bool " + name + "_inside = " + name + "_raw >= 0 && " +
         name + "_raw < " + Int(d) + ";\n";
  }
  s += "  const idx " + name + " = bt::clamp_index(" + name + "_raw, 0, " +
       Int(d - 1) + ");\n";
  return s;
}

std::string EmitContext::Int(int64_t v) {
  // An int literal where one fits, so that 32-bit index arithmetic stays
  // 32-bit (a long long operand would widen every expression it meets).
  if (v >= INT32_MIN + 1 && v <= INT32_MAX) {
    return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  }
  if (v == INT64_MIN) return "(-9223372036854775807LL-1)";
  return "(" + std::to_string(v) + "LL)";
}

int EmitContext::Kernel::Arg(const BufferRef& ref) {
  auto it = std::find(args.begin(), args.end(), ref);
  if (it != args.end()) return static_cast<int>(it - args.begin());
  args.push_back(ref);
  return static_cast<int>(args.size()) - 1;
}

std::string EmitContext::Kernel::Temp() {
  return "t" + std::to_string(temps++);
}

EmitContext::Kernel EmitContext::NewKernel(int64_t threads) {
  Kernel k;
  // Numbered when made, so that kernels built side by side differ; named in
  // the source (and kernel_names) only when finished and new.
  k.name = options_.kernel_prefix + std::to_string(next_kernel_++);
  k.threads = threads;
  return k;
}

Status EmitContext::Finish(Kernel kernel) {
  if (static_cast<int>(kernel.args.size()) > kMaxKernelArgs) {
    return NotOnCuda(
        "a kernel of " + std::to_string(kernel.args.size()) + " buffers",
        "a kernel takes at most " + std::to_string(kMaxKernelArgs));
  }
  const bool wide = WideIndex(kernel);
  const std::string idx = wide ? "bt::i64" : "bt::i32";
  // A kernel whose text (less the comments naming its values) is one
  // already emitted is that kernel, launched again: the MLP step's backward
  // pass repeats some of its products and reductions, and every kernel
  // costs NVRTC some milliseconds.
  std::string key = idx + "\n";
  for (size_t at = 0; at < kernel.body.size();) {
    size_t end = kernel.body.find('\n', at);
    end = end == std::string::npos ? kernel.body.size() : end + 1;
    if (kernel.body.compare(at, 5, "  // ") != 0) {
      key.append(kernel.body, at, end - at);
    }
    at = end;
  }
  const auto [known, is_new] = kernel_by_text_.try_emplace(
      std::move(key), static_cast<int>(out_->kernel_names.size()));
  const int index = known->second;
  if (is_new) out_->kernel_names.push_back(kernel.name);
  if (!is_new) {
    Launch(index, kernel);
    return OkStatus();
  }
  std::string& s = out_->source;
  const size_t text_start = s.size();
  s += "\n// step " + std::to_string(step_index_) + "\n";
  s += "BATON_FN void " + kernel.name + "_body(" + idx +
       " i, const KernelArgs& a) {\n";
  s += "  typedef " + idx + " idx;\n";
  s += kernel.body;
  s += "}\n";
  s += "#ifdef BATON_HOST_EMULATION\n";
  s += "extern \"C\" void " + kernel.name +
       "(bt::i64 n, const KernelArgs* a) {\n"
       "  for (bt::i64 i = 0; i < n; ++i) " +
       kernel.name + "_body((" + idx + ")i, *a);\n}\n";
  s += "#else\n";
  // The grid-stride loop counts in 32 bits when the kernel does: i < n <
  // 2^31 and a launch of at most 2^31 threads (kernel_emitter.h) keep
  // i + stride below 2^32. A 64-bit counter here would double NVRTC's
  // time for the whole kernel.
  const std::string counter = wide ? "bt::i64" : "unsigned";
  s += "extern \"C\" __global__ void " + kernel.name +
       "(const KernelArgs a, bt::i64 n) {\n"
       "  for (" + counter + " i = (" + counter +
       ")blockIdx.x * blockDim.x + threadIdx.x; i < (" + counter + ")n;\n"
       "       i += (" + counter + ")blockDim.x * gridDim.x)\n"
       "    " +
       kernel.name + "_body((" + idx + ")i, a);\n}\n";
  s += "#endif\n";
  out_->kernel_text.emplace_back(text_start, s.size() - text_start);
  Launch(index, kernel);
  return OkStatus();
}

void EmitContext::Launch(int index, Kernel& kernel) {
  if (kernel.threads <= 0) return;
  Action act;
  act.kind = Action::Kind::kKernel;
  act.step = step_index_;
  act.kernel = index;
  act.threads = kernel.threads;
  act.args = std::move(kernel.args);
  out_->actions.push_back(std::move(act));
}

void EmitContext::ForgetKernelsFrom(size_t count) {
  for (auto it = kernel_by_text_.begin(); it != kernel_by_text_.end();) {
    it = static_cast<size_t>(it->second) >= count ? kernel_by_text_.erase(it)
                                                  : std::next(it);
  }
}

void EmitContext::Copy(const BufferRef& dst, const BufferRef& src,
                       int64_t bytes) {
  if (bytes <= 0) return;
  Action act;
  act.kind = Action::Kind::kCopy;
  act.step = step_index_;
  act.dst = dst;
  act.src = src;
  act.bytes = bytes;
  out_->actions.push_back(std::move(act));
}

void EmitContext::Gemm(DType dtype, int64_t batch, int64_t m, int64_t n,
                       int64_t k, const BufferRef& a, const BufferRef& b,
                       const BufferRef& c, bool trans_a, bool trans_b) {
  Action act;
  act.kind = Action::Kind::kGemm;
  act.step = step_index_;
  act.dtype = dtype;
  act.batch = batch;
  act.m = m;
  act.n = n;
  act.k = k;
  act.a = a;
  act.b = b;
  act.c = c;
  act.trans_a = trans_a;
  act.trans_b = trans_b;
  out_->actions.push_back(std::move(act));
}

BufferRef EmitContext::Scratch(int64_t bytes) {
  int64_t& used = out_->step_scratch_bytes[step_index_];
  BufferRef ref{BufferRef::Kind::kScratch, used};
  scratch_bytes_[used] = bytes;
  used += (std::max<int64_t>(bytes, 1) + kScratchAlignment - 1) /
          kScratchAlignment * kScratchAlignment;
  return ref;
}

bool EmitContext::IsVirtualScalar(ValueId v) const {
  return plan_.scalar_source[v] != compiler::kNoValue;
}

BufferRef EmitContext::Value(ValueId v) const {
  const ValueId src = plan_.scalar_source[v];
  return BufferRef{BufferRef::Kind::kSlot, src != compiler::kNoValue ? src : v};
}

std::string EmitContext::Pointer(Kernel& k, const BufferRef& ref, DType dtype,
                                 bool writable) {
  const std::string type = StorageType(dtype);
  return "((" + std::string(writable ? "" : "const ") + type + "*)a.p[" +
         std::to_string(k.Arg(ref)) + "])";
}

std::string EmitContext::Load(Kernel& k, ValueId v, const std::string& index) {
  return LoadRef(k, Value(v), program_.type(v).dtype,
                 IsVirtualScalar(v) ? "0" : index);
}

std::string EmitContext::LoadRef(Kernel& k, const BufferRef& ref, DType dtype,
                                 const std::string& index) {
  return Pointer(k, ref, dtype, false) + "[" + index + "]";
}

std::string EmitContext::Store(Kernel& k, ValueId v, const std::string& index,
                               const std::string& expr) {
  return StoreRef(k, Value(v), program_.type(v).dtype, index, expr);
}

std::string EmitContext::StoreRef(Kernel& k, const BufferRef& ref, DType dtype,
                                  const std::string& index,
                                  const std::string& expr) {
  return Pointer(k, ref, dtype, true) + "[" + index + "] = " + expr + ";";
}

std::vector<int64_t> EmitContext::Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

std::string EmitContext::Unravel(const std::vector<int64_t>& dims,
                                 const std::string& linear,
                                 const std::string& prefix) {
  std::string s;
  const std::vector<int64_t> strides = Strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    std::string e = "(" + linear + ")";
    if (strides[d] != 1) e = "(" + e + " / " + Int(strides[d]) + ")";
    if (d > 0) e = "(" + e + " % " + Int(dims[d]) + ")";
    s += "  const idx " + prefix + std::to_string(d) + " = " + e + ";\n";
  }
  return s;
}

Status EmitContext::NotOnCuda(const std::string& what,
                              const std::string& why) const {
  return Unimplemented(name_ + ": " + what +
                       " does not run on CUDA yet: " + why);
}

}  // namespace baton::cuda::codegen
