// libFuzzer target: the DLPack import path (runtime/dlpack_abi.h,
// strided_import.h) that bt.from_dlpack runs on a producer's DLTensor.
//
// The input describes a DLTensor -- data pointer (into a real heap buffer
// of an input-chosen size, or null, or anywhere), ndim (also negative or
// huge), shape, strides (null, plausible or hostile), dtype code/bits/lanes,
// device and byte offset -- whose shape and stride arrays are heap arrays of
// exactly ndim entries, so AddressSanitizer catches any read past them or
// past the buffer. Invariants, against the 128-bit model of
// strided_oracle.h:
//  - validation never crashes, overflows or trips a sanitizer;
//  - unsupported dtypes and devices are refused with from_dlpack's
//    messages; bad ranks and shapes are refused;
//  - against the buffer's extent, a tensor is accepted exactly when every
//    byte of its elements lies inside the buffer, and the plan's shape,
//    element-0 address, byte range and contiguity are the model's;
//  - without an extent, it is accepted exactly when its byte range fits the
//    address space (and int64 offsets), with the same plan;
//  - a null data pointer is accepted only for a tensor without elements;
//  - CopyStridedToDense of an accepted plan reads only the buffer and
//    copies what reading each element on its own gives.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/runtime/dlpack_abi.h"
#include "fuzz_input.h"
#include "strided_oracle.h"

namespace baton::fuzz {
namespace {

using dlpack::DLTensor;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::abort();
}

int64_t StrideFor(FuzzInput& in, int64_t row_major) {
  const uint8_t b = in.Byte();
  if (b < 100) return row_major;
  if (b < 140) return -row_major;
  if (b < 170) return row_major * in.Int(0, 3);
  if (b < 230) return in.Small();
  return in.Hostile();
}

void CheckPlan(const StridedPlan& p, const std::vector<int64_t>& dims,
               DType dtype, const OracleRange& r, bool contiguous) {
  if (p.shape != Shape(dims) || p.dtype != dtype) Fail("plan shape or dtype");
  if (static_cast<i128>(reinterpret_cast<uintptr_t>(p.first)) != r.first) {
    Fail("plan's element 0 is not at data + byte_offset");
  }
  const i128 lowest = r.empty ? 0 : r.lo - r.first;
  const i128 end = r.empty ? 0 : r.hi - r.first;
  if (p.lowest != lowest || p.end != end) {
    Fail("plan's byte range [" + std::to_string(p.lowest) + ", " +
         std::to_string(p.end) + ") differs from the model's [" +
         std::to_string(static_cast<int64_t>(lowest)) + ", " +
         std::to_string(static_cast<int64_t>(end)) + ")");
  }
  if (p.contiguous != contiguous)
    Fail("plan's contiguity differs from the model's");
  if (p.nbytes() !=
      p.num_elements() * static_cast<int64_t>(dtype_size(dtype))) {
    Fail("nbytes");
  }
}

}  // namespace
}  // namespace baton::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baton;
  using namespace baton::fuzz;
  FuzzInput in(data, size);

  // The producer's memory: exactly `buffer_size` bytes on the heap.
  const size_t buffer_size = static_cast<size_t>(in.Int(0, 2048));
  auto buffer = std::make_unique<uint8_t[]>(buffer_size);
  for (size_t i = 0; i < buffer_size; ++i)
    buffer[i] = static_cast<uint8_t>(i * 31 + 7);

  DLTensor t{};
  switch (in.Int(0, 7)) {
    case 0:
      t.data = nullptr;
      break;
    case 1:
      t.data = reinterpret_cast<void*>(static_cast<uintptr_t>(in.U64()));
      break;
    default:
      t.data = buffer.get() + in.Int(0, static_cast<int>(buffer_size));
      break;
  }
  static constexpr int32_t kOddRanks[] = {-1,   64,        65,
                                          1000, INT32_MIN, INT32_MAX};
  t.ndim = in.Byte() < 235 ? in.Int(0, 5) : kOddRanks[in.Pick(6)];
  static constexpr uint8_t kBits[] = {8, 16, 32, 64, 1, 128, 0, 24};
  static constexpr uint8_t kCodes[] = {0, 1, 2, 4, 6, 3, 5, 7, 255};
  t.dtype.code = in.Byte() < 230 ? kCodes[in.Pick(5)] : kCodes[in.Pick(9)];
  t.dtype.bits = in.Byte() < 230 ? kBits[in.Pick(4)] : kBits[in.Pick(8)];
  t.dtype.lanes =
      in.Byte() < 235 ? 1 : static_cast<uint16_t>(in.Int(0, 4) * 7919);
  t.device.device_type = in.Byte() < 235 ? dlpack::kDLCPU : in.Int(-1, 16);
  t.device.device_id = in.Int(0, 3);
  const std::optional<DType> dtype = dlpack::FromDLDataType(t.dtype);
  const int64_t itemsize = dtype ? static_cast<int64_t>(dtype_size(*dtype)) : 1;

  // Shape and strides: heap arrays of exactly ndim entries (one entry, not
  // ndim, for ranks too large to allocate, which must be refused unread).
  const bool rank_ok = t.ndim >= 0 && t.ndim <= kMaxImportRank;
  const size_t alloc = rank_ok ? static_cast<size_t>(t.ndim) : 1;
  auto shape = std::make_unique<int64_t[]>(alloc);
  auto strides = std::make_unique<int64_t[]>(alloc);
  std::vector<int64_t> dims;
  int64_t row_major = 1;  // in elements, as DLPack counts strides
  for (size_t i = 0; i < alloc; ++i) shape[i] = in.Dim();
  const bool has_strides = in.Byte() >= 80;
  for (size_t i = alloc; i-- > 0;) {
    strides[i] = StrideFor(in, row_major);
    if (shape[i] > 0 && shape[i] < 4096 && row_major < (int64_t{1} << 40))
      row_major *= shape[i];
  }
  t.shape = in.Byte() < 250 || t.ndim == 0 ? shape.get() : nullptr;
  t.strides = has_strides ? strides.get() : nullptr;
  const uint8_t ob = in.Byte();
  t.byte_offset = ob < 150   ? 0
                  : ob < 230 ? static_cast<uint64_t>(in.Int(0, 256))
                             : static_cast<uint64_t>(in.Hostile());

  const MemoryExtent extent{buffer.get(), buffer_size};
  const Result<StridedPlan> with = dlpack::PlanDLTensorImport(t, extent);
  const Result<StridedPlan> without = dlpack::PlanDLTensorImport(t);

  // Refusals before any shape is read.
  if (!dtype || !dlpack::HostReadable(t.device) || !rank_ok ||
      (t.ndim > 0 && t.shape == nullptr)) {
    if (with.ok() || without.ok()) Fail("accepted a bad dtype, device or rank");
    const std::string& m = with.status().message();
    if (!dtype &&
        m.rfind("from_dlpack: baton has no dtype for DLPack type (code ", 0) !=
            0) {
      Fail("dtype message: " + m);
    }
    if (dtype && !dlpack::HostReadable(t.device) &&
        m.rfind("from_dlpack: the producer's memory is on DLPack device type ",
                0) != 0) {
      Fail("device message: " + m);
    }
    return 0;
  }
  if (dlpack::ToDLDataType(*dtype).code != t.dtype.code ||
      dlpack::ToDLDataType(*dtype).bits != t.dtype.bits) {
    Fail("the dtype mapping does not round-trip");
  }
  dims.assign(shape.get(), shape.get() + t.ndim);
  if (!Shape(dims).Check().ok()) {
    if (with.ok() || without.ok()) Fail("accepted a shape that fails Check");
    return 0;
  }

  // The model.
  std::vector<i128> bstrides(dims.size());
  {
    i128 acc = itemsize;
    for (size_t i = dims.size(); i-- > 0;) {
      bstrides[i] =
          t.strides ? static_cast<i128>(t.strides[i]) * itemsize : acc;
      acc *= dims[i];
    }
  }
  const i128 first = static_cast<i128>(reinterpret_cast<uintptr_t>(t.data)) +
                     static_cast<i128>(t.byte_offset);
  const OracleRange r = ExactRange(dims, bstrides, first, itemsize);
  const i128 kI64Max = INT64_MAX, kI64Min = INT64_MIN, kUMax = UINTPTR_MAX;
  const bool offset_ok =
      t.byte_offset <= static_cast<uint64_t>(INT64_MAX) && first <= kUMax;
  const i128 base =
      static_cast<i128>(reinterpret_cast<uintptr_t>(buffer.get()));
  const bool ok_with =
      offset_ok &&
      (r.empty || (t.data != nullptr &&
                   Inside(r, base, base + static_cast<i128>(buffer_size))));
  const bool ok_without =
      offset_ok &&
      (r.empty || (t.data != nullptr && r.lo - first >= kI64Min &&
                   r.hi - first <= kI64Max && r.lo >= 0 && r.hi <= kUMax));
  if (with.ok() != ok_with) {
    Fail(std::string(ok_with ? "refused" : "accepted") +
         " a tensor whose bytes lie " + (ok_with ? "inside" : "outside") +
         " the buffer: " + (with.ok() ? "" : with.status().message()));
  }
  if (without.ok() != ok_without) {
    Fail(std::string(ok_without ? "refused" : "accepted") +
         " a tensor (no extent) the model says is " +
         (ok_without ? "fine" : "not") + ": " +
         (without.ok() ? "" : without.status().message()));
  }
  bool contiguous = true;
  {
    i128 expected = itemsize;
    for (size_t i = dims.size(); i-- > 0 && !r.empty;) {
      if (dims[i] == 1) continue;
      if (bstrides[i] != expected) contiguous = false;
      expected *= dims[i];
    }
  }
  if (without.ok()) CheckPlan(without.value(), dims, *dtype, r, contiguous);
  if (!with.ok()) return 0;
  const StridedPlan& plan = with.value();
  CheckPlan(plan, dims, *dtype, r, contiguous);

  // The copy reads only the buffer (ASan) and gives the model's bytes.
  // (Zero strides make huge tensors of a few bytes: copy only small ones.)
  if (plan.nbytes() > (int64_t{1} << 20)) return 0;
  std::vector<uint8_t> dst(static_cast<size_t>(plan.nbytes()) + 1, 0xAB);
  CopyStridedToDense(plan, dst.data());
  if (dst.back() != 0xAB) Fail("the copy wrote past nbytes");
  if (!r.empty) {
    const std::vector<uint8_t> want = ReadNaive(
        dims, bstrides, reinterpret_cast<const uint8_t*>(plan.first), itemsize);
    if (std::memcmp(want.data(), dst.data(), want.size()) != 0) {
      Fail("the strided copy differs from reading each element");
    }
  }
  return 0;
}
