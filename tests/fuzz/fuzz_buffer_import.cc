// libFuzzer target: the buffer-protocol import path (PlanBufferImport in
// runtime/strided_import.h) that device_put, device_put(into=) and the
// tracer's numpy snapshots run on a Py_buffer, plus the dtype-name lookup
// the Python layer passes with it (the buffer is read without a format:
// the dtype travels by name).
//
// The input describes a Py_buffer: buf (into a real heap buffer, null or
// anywhere), len (also negative), itemsize, ndim (also negative or huge),
// shape and byte strides (heap arrays of exactly ndim entries; strides null
// for a C-contiguous export, as PyBUF_ND gives, or plausible/hostile), and
// the dtype it is read as. Invariants, against strided_oracle.h:
//  - validation never crashes, overflows or trips a sanitizer;
//  - a contiguous export is accepted exactly when its shape passes
//    Shape::Check() and len is its byte size (the message names both
//    otherwise), and then its bytes are [buf, buf + len) in order;
//  - a strided export needs itemsize == the dtype's size and len == its
//    logical byte size, and is accepted against a known extent exactly when
//    its elements lie inside it;
//  - CopyStridedToDense reads only the buffer and copies what reading each
//    element on its own gives;
//  - dtype_from_name accepts exactly the names dtype_name gives.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/runtime/strided_import.h"
#include "fuzz_input.h"
#include "strided_oracle.h"

namespace baton::fuzz {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::abort();
}

void CheckDTypeName(FuzzInput& in) {
  std::string name;
  if (in.Bool()) {
    name = dtype_name(static_cast<DType>(in.Int(0, kNumDTypes - 1)));
    if (in.Bool() && !name.empty())
      name[in.Pick(name.size())] = static_cast<char>(in.Byte());
    if (in.Byte() < 20) name.push_back(static_cast<char>(in.Byte()));
  } else {
    for (int n = in.Int(0, 12); n > 0; --n)
      name.push_back(static_cast<char>(in.Byte()));
  }
  const std::optional<DType> d = dtype_from_name(name);
  if (d && dtype_name(*d) != name)
    Fail("dtype_from_name accepted '" + name + "'");
  for (int i = 0; i < kNumDTypes; ++i) {
    if (!d && dtype_name(static_cast<DType>(i)) == name)
      Fail("dtype name not found");
  }
}

}  // namespace
}  // namespace baton::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baton;
  using namespace baton::fuzz;
  FuzzInput in(data, size);
  CheckDTypeName(in);

  const DType dtype = static_cast<DType>(in.Int(0, kNumDTypes - 1));
  const int64_t dsize = static_cast<int64_t>(dtype_size(dtype));
  const bool strided = in.Byte() >= 128;
  static constexpr int kOddRanks[] = {-1, 64, 65, 1000, INT32_MIN};
  const int ndim = in.Byte() < 240 ? in.Int(0, 5) : kOddRanks[in.Pick(5)];
  const bool rank_ok = ndim >= 0 && ndim <= kMaxImportRank;
  const size_t alloc = rank_ok ? static_cast<size_t>(ndim) : 1;
  auto shape = std::make_unique<int64_t[]>(alloc);
  auto strides = std::make_unique<int64_t[]>(alloc);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < alloc; ++i) shape[i] = in.Dim();
  int64_t row_major = dsize;  // bytes
  for (size_t i = alloc; i-- > 0;) {
    const uint8_t b = in.Byte();
    strides[i] = b < 100   ? row_major
                 : b < 140 ? -row_major
                 : b < 200 ? row_major * in.Int(0, 3) + in.Int(-1, 1)
                 : b < 235 ? in.Small()
                           : in.Hostile();
    if (shape[i] > 0 && shape[i] < 4096 && row_major < (int64_t{1} << 40))
      row_major *= shape[i];
  }
  // The logical size, as an honest exporter reports it.
  bool shape_ok = rank_ok;
  if (rank_ok) {
    dims.assign(shape.get(), shape.get() + ndim);
    shape_ok = Shape(dims).Check().ok();
  }
  const int64_t nbytes = shape_ok ? Shape(dims).num_elements() * dsize : 0;
  const uint8_t lb = in.Byte();
  const int64_t len = lb < 200 && nbytes <= 4096 ? nbytes
                      : lb < 240                 ? in.Int(0, 4096)
                                                 : in.Hostile();

  // The memory: for a contiguous export, exactly len bytes (the protocol's
  // promise); for a strided one, a buffer of its own size around buf.
  const size_t buffer_size = static_cast<size_t>(
      strided ? in.Int(0, 2048)
              : (len >= 0 && len <= 4096 ? len : in.Int(0, 64)));
  auto buffer = std::make_unique<uint8_t[]>(buffer_size);
  for (size_t i = 0; i < buffer_size; ++i)
    buffer[i] = static_cast<uint8_t>(i * 13 + 5);
  BufferView v;
  const uint8_t pb = in.Byte();
  v.buf = pb < 8 ? nullptr
          : pb < 16
              ? reinterpret_cast<void*>(static_cast<uintptr_t>(in.U64()))
              : buffer.get() +
                    (strided ? in.Int(0, static_cast<int>(buffer_size)) : 0);
  v.len = len;
  v.itemsize = in.Byte() < 240 ? dsize : in.Int(0, 9);
  v.ndim = ndim;
  v.shape = in.Byte() < 250 || ndim == 0 ? shape.get() : nullptr;
  v.strides = strided ? strides.get() : nullptr;
  const bool known_extent = !strided || in.Byte() < 200;
  const MemoryExtent extent{buffer.get(), buffer_size};
  const Result<StridedPlan> r = PlanBufferImport(
      v, dtype, known_extent && strided ? std::optional(extent) : std::nullopt);

  const bool honest_buf = v.buf != nullptr && pb >= 16 &&
                          (strided || buffer_size == static_cast<size_t>(len));
  const bool basics =
      rank_ok && (ndim == 0 || v.shape != nullptr) && len >= 0 && shape_ok;
  if (!basics) {
    if (r.ok()) Fail("accepted a bad rank, shape or length");
    return 0;
  }
  std::vector<i128> bstrides(dims.size());
  {
    i128 acc = dsize;
    for (size_t i = dims.size(); i-- > 0;) {
      bstrides[i] = strided ? static_cast<i128>(strides[i]) : acc;
      acc *= dims[i];
    }
  }
  const i128 first = static_cast<i128>(reinterpret_cast<uintptr_t>(v.buf));
  const OracleRange range = ExactRange(dims, bstrides, first, dsize);
  const i128 kUMax = UINTPTR_MAX;
  bool expect = len == nbytes;
  if (!strided) {
    if (!expect && r.ok())
      Fail("accepted a length that is not the shape's size");
    if (!expect) {
      const std::string want =
          "host buffer of " + std::to_string(len) + " bytes does not match " +
          std::string(dtype_name(dtype)) + Shape(dims).to_string();
      if (r.status().message() != want)
        Fail("message: " + r.status().message());
      return 0;
    }
    expect = range.empty || (v.buf != nullptr && range.hi <= kUMax);
  } else {
    expect = expect && v.itemsize == dsize && (range.empty || v.buf != nullptr);
    const i128 base =
        static_cast<i128>(reinterpret_cast<uintptr_t>(buffer.get()));
    if (known_extent) {
      expect = expect &&
               (range.empty ||
                Inside(range, base, base + static_cast<i128>(buffer_size)));
    } else {
      expect = expect && (range.empty || (range.lo - first >= INT64_MIN &&
                                          range.hi - first <= INT64_MAX &&
                                          range.lo >= 0 && range.hi <= kUMax));
    }
  }
  if (r.ok() != expect) {
    Fail(std::string(expect ? "refused" : "accepted") +
         " a buffer the model says is " + (expect ? "fine" : "not") + ": " +
         (r.ok() ? "" : r.status().message()));
  }
  if (!r.ok()) return 0;
  const StridedPlan& p = r.value();
  if (p.shape != Shape(dims) || p.dtype != dtype || p.nbytes() != nbytes)
    Fail("plan type");
  if (reinterpret_cast<const void*>(p.first) != v.buf)
    Fail("plan's element 0 is not buf");
  if (!range.empty &&
      (p.lowest != range.lo - first || p.end != range.hi - first)) {
    Fail("plan's byte range differs from the model's");
  }
  if (!strided && !p.contiguous) Fail("a contiguous export planned as strided");
  // Copy when the memory is real: a contiguous export's (honest) or one
  // checked against the extent.
  // (Zero strides make huge tensors of a few bytes: copy only small ones.)
  if (!honest_buf || (strided && !known_extent) || nbytes > (int64_t{1} << 20))
    return 0;
  std::vector<uint8_t> dst(static_cast<size_t>(nbytes) + 1, 0xCD);
  CopyStridedToDense(p, dst.data());
  if (dst.back() != 0xCD) Fail("the copy wrote past nbytes");
  if (!range.empty) {
    const std::vector<uint8_t> want =
        ReadNaive(dims, bstrides, static_cast<const uint8_t*>(v.buf), dsize);
    if (std::memcmp(want.data(), dst.data(), want.size()) != 0) {
      Fail("the copy differs from reading each element");
    }
  }
  return 0;
}
