// The validator behind from_dlpack and the buffer-protocol imports
// (runtime/strided_import.h, runtime/dlpack_abi.h): hostile descriptions
// are refused with a message, valid ones are planned so that the copy reads
// exactly their elements. tests/fuzz/fuzz_dlpack_import.cc and
// fuzz_buffer_import.cc search the same space at random; these are the
// cases worth naming.
#include "baton/runtime/strided_import.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "baton/runtime/dlpack_abi.h"

namespace baton {
namespace {

using dlpack::DLTensor;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// A DLTensor over `data` with the given shape and (optional) strides; the
// vectors must outlive the tensor.
DLTensor Tensor(void* data, std::vector<int64_t>& shape,
                std::vector<int64_t>* strides = nullptr,
                dlpack::DLDataType dtype = {dlpack::kDLFloat, 32, 1}) {
  DLTensor t{};
  t.data = data;
  t.device = {dlpack::kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  t.strides = strides ? strides->data() : nullptr;
  t.byte_offset = 0;
  return t;
}

MemoryExtent Extent(const std::vector<float>& v) {
  return {v.data(), v.size() * sizeof(float)};
}

std::string Error(const Result<StridedPlan>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  return r.status().message();
}

// The elements in row-major index order, read one at a time (the
// definition CopyStridedToDense must agree with).
std::vector<float> NaiveGather(const StridedPlan& p) {
  std::vector<float> out;
  std::vector<int64_t> idx(p.shape.rank(), 0);
  for (int64_t n = 0; n < p.num_elements(); ++n) {
    int64_t off = 0;
    for (int i = 0; i < p.shape.rank(); ++i) off += idx[i] * p.byte_strides[i];
    float v;
    std::memcpy(&v, p.first + off, sizeof v);
    out.push_back(v);
    for (int i = p.shape.rank() - 1; i >= 0; --i) {
      if (++idx[i] < p.shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

std::vector<float> Copy(const StridedPlan& p) {
  std::vector<float> out(static_cast<size_t>(p.num_elements()), -1.0f);
  CopyStridedToDense(p, out.data());
  return out;
}

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(StridedImport, CompactRowMajorIsContiguous) {
  std::vector<float> buf = Iota(6);
  std::vector<int64_t> shape{2, 3};
  auto r = dlpack::PlanDLTensorImport(Tensor(buf.data(), shape), Extent(buf));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->shape, (Shape{2, 3}));
  EXPECT_EQ(r->dtype, DType::kFloat32);
  EXPECT_TRUE(r->contiguous);
  EXPECT_EQ(r->byte_strides, (std::vector<int64_t>{12, 4}));
  EXPECT_EQ(r->lowest, 0);
  EXPECT_EQ(r->end, 24);
  EXPECT_EQ(Copy(*r), buf);
}

TEST(StridedImport, SizeOneDimensionsMayHaveAnyStride) {
  std::vector<float> buf = Iota(3);
  std::vector<int64_t> shape{1, 3, 1}, strides{kI64Max, 1, -999};
  auto r = dlpack::PlanDLTensorImport(Tensor(buf.data(), shape, &strides),
                                      Extent(buf));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->contiguous);
  EXPECT_EQ(Copy(*r), buf);
}

TEST(StridedImport, TransposedReversedAndBroadcastViewsCopyTheirElements) {
  std::vector<float> buf = Iota(24);
  struct Case {
    std::vector<int64_t> shape, strides;
    uint64_t byte_offset;
  } cases[] = {
      {{4, 6}, {1, 4}, 0},         // transposed 6x4
      {{6}, {-1}, 5 * 4},          // reversed
      {{2, 3, 4}, {12, 0, 1}, 0},  // a broadcast middle dimension
      {{3, 2, 2}, {8, 4, 1}, 0},   // merges into runs of 2, then 8
      {{2, 2, 3}, {-12, 3, -1}, 20 * 4},
  };
  for (Case& c : cases) {
    auto r = dlpack::PlanDLTensorImport(
        [&] {
          DLTensor t = Tensor(buf.data(), c.shape, &c.strides);
          t.byte_offset = c.byte_offset;
          return t;
        }(),
        Extent(buf));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->contiguous);
    EXPECT_EQ(Copy(*r), NaiveGather(*r));
  }
  // The reversed one, spelled out.
  std::vector<int64_t> shape{6}, strides{-1};
  DLTensor t = Tensor(buf.data(), shape, &strides);
  t.byte_offset = 5 * 4;
  auto r = dlpack::PlanDLTensorImport(t, Extent(buf));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->lowest, -20);
  EXPECT_EQ(r->end, 4);
  EXPECT_EQ(Copy(*r), (std::vector<float>{5, 4, 3, 2, 1, 0}));
}

TEST(StridedImport, OverflowingShapesAreRefused) {
  std::vector<float> buf(1);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{kI64Max, 2},
                                     {1 << 20, 1 << 20, 1 << 20},
                                     {kMaxElements, 2},
                                     {0, kI64Max},
                                     {kI64Max}}) {
    auto r = dlpack::PlanDLTensorImport(Tensor(buf.data(), shape));
    EXPECT_NE(Error(r).find("too large"), std::string::npos) << Error(r);
  }
  std::vector<int64_t> negative{3, -1};
  EXPECT_NE(Error(dlpack::PlanDLTensorImport(Tensor(buf.data(), negative)))
                .find("negative dimension"),
            std::string::npos);
}

TEST(StridedImport, ZeroSizeTensorsReadNothingWhateverTheirStrides) {
  // Huge other dimensions are fine while the product of the non-zero ones
  // passes Shape::Check(); the data pointer and strides are never used.
  std::vector<int64_t> shape{0, kMaxElements}, strides{kI64Max, -kI64Max};
  auto r = dlpack::PlanDLTensorImport(Tensor(nullptr, shape, &strides));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->num_elements(), 0);
  EXPECT_EQ(r->nbytes(), 0);
  EXPECT_TRUE(r->contiguous);
  EXPECT_EQ(r->lowest, 0);
  EXPECT_EQ(r->end, 0);
  CopyStridedToDense(*r, nullptr);  // reads and writes nothing
}

TEST(StridedImport, NegativeStridesReachingBeforeTheBufferAreRefused) {
  std::vector<float> buf = Iota(4);
  std::vector<int64_t> shape{4}, strides{-1};
  // Element 0 at the start: elements 1..3 would be before the buffer.
  auto r = dlpack::PlanDLTensorImport(Tensor(buf.data(), shape, &strides),
                                      Extent(buf));
  EXPECT_NE(Error(r).find("outside the buffer"), std::string::npos);
  // Below address 0, even without a known extent.
  std::vector<int64_t> big{2}, down{-1024};
  auto low = dlpack::PlanDLTensorImport(
      Tensor(reinterpret_cast<void*>(uintptr_t{64}), big, &down));
  EXPECT_NE(Error(low).find("outside the address space"), std::string::npos);
}

TEST(StridedImport, StridesPastTheEndAreRefused) {
  std::vector<float> buf = Iota(6);
  std::vector<int64_t> shape{2, 3}, strides{4, 1};  // needs 7 floats
  auto r = dlpack::PlanDLTensorImport(Tensor(buf.data(), shape, &strides),
                                      Extent(buf));
  EXPECT_NE(Error(r).find("outside the buffer's 24 bytes"), std::string::npos);
  // One past the end through the byte offset.
  std::vector<int64_t> one{6};
  DLTensor t = Tensor(buf.data(), one);
  t.byte_offset = 1;
  EXPECT_FALSE(dlpack::PlanDLTensorImport(t, Extent(buf)).ok());
}

TEST(StridedImport, StrideArithmeticThatWouldOverflowIsRefused) {
  std::vector<float> buf(1);
  // stride * itemsize overflows.
  std::vector<int64_t> shape{2}, strides{kI64Max / 2};
  EXPECT_NE(
      Error(dlpack::PlanDLTensorImport(Tensor(buf.data(), shape, &strides)))
          .find("overflows 64 bits"),
      std::string::npos);
  // stride * (dim - 1) overflows.
  std::vector<int64_t> shape2{1 << 30, 2}, strides2{int64_t{1} << 40, 1};
  EXPECT_NE(
      Error(dlpack::PlanDLTensorImport(Tensor(buf.data(), shape2, &strides2)))
          .find("64-bit address range"),
      std::string::npos);
  // The sum of the spans overflows although each one fits.
  std::vector<int64_t> shape3{2, 2, 2},
      strides3{int64_t{1} << 60, int64_t{1} << 60, int64_t{1} << 60};
  EXPECT_FALSE(
      dlpack::PlanDLTensorImport(Tensor(buf.data(), shape3, &strides3)).ok());
  // The span fits int64 but not the address space above the data.
  std::vector<int64_t> shape4{2}, strides4{int64_t{1} << 60};
  EXPECT_NE(Error(dlpack::PlanDLTensorImport(
                      Tensor(reinterpret_cast<void*>(~uintptr_t{0} - (1 << 20)),
                             shape4, &strides4)))
                .find("outside the address space"),
            std::string::npos);
}

TEST(StridedImport, ByteOffsetOverflowIsRefused) {
  std::vector<int64_t> shape{1};
  for (uint64_t offset :
       {~uint64_t{0}, uint64_t{1} << 63, ~uint64_t{0} - 4096}) {
    DLTensor t = Tensor(reinterpret_cast<void*>(uintptr_t{4096}), shape);
    t.byte_offset = offset;
    EXPECT_NE(Error(dlpack::PlanDLTensorImport(t)).find("byte_offset"),
              std::string::npos);
  }
  // Near the top of the address space, a fitting offset can still wrap.
  DLTensor t = Tensor(reinterpret_cast<void*>(~uintptr_t{0} - 16), shape);
  t.byte_offset = 32;
  EXPECT_FALSE(dlpack::PlanDLTensorImport(t).ok());
}

TEST(StridedImport, DTypesBatonLacksAreRefusedWithTheirDLPackCode) {
  std::vector<float> buf(4);
  std::vector<int64_t> shape{1};
  auto msg = [&](dlpack::DLDataType dt) {
    return Error(
        dlpack::PlanDLTensorImport(Tensor(buf.data(), shape, nullptr, dt)));
  };
  EXPECT_EQ(msg({dlpack::kDLFloat, 32, 4}),
            "from_dlpack: baton has no dtype for DLPack type (code 2, bits "
            "32, lanes 4)");
  EXPECT_EQ(msg({dlpack::kDLFloat, 32, 0}),
            "from_dlpack: baton has no dtype for DLPack type (code 2, bits "
            "32, lanes 0)");
  EXPECT_NE(msg({dlpack::kDLFloat, 8, 1}).find("code 2, bits 8"),
            std::string::npos);
  EXPECT_NE(msg({dlpack::kDLUInt, 16, 1}).find("code 1, bits 16"),
            std::string::npos);
  // Complex of 32 bits (two float16 parts): baton has complex64/128 only.
  EXPECT_NE(msg({dlpack::kDLComplex, 32, 1}).find("code 5, bits 32"),
            std::string::npos);
  EXPECT_NE(msg({dlpack::kDLBool, 1, 1}).find("bits 1"), std::string::npos);
  EXPECT_NE(msg({dlpack::kDLBfloat, 32, 1}).find("code 4"), std::string::npos);
  // Every baton dtype round-trips through its DLPack type.
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = static_cast<DType>(i);
    EXPECT_EQ(dlpack::FromDLDataType(dlpack::ToDLDataType(d)), d);
  }
}

TEST(StridedImport, DevicesTheHostCannotReadAreRefused) {
  std::vector<float> buf(1);
  std::vector<int64_t> shape{1};
  DLTensor t = Tensor(buf.data(), shape);
  t.device = {dlpack::kDLCUDA, 0};
  EXPECT_EQ(Error(dlpack::PlanDLTensorImport(t)),
            "from_dlpack: the producer's memory is on DLPack device type 2, "
            "which this backend cannot read; copy it to the host first");
  t.device = {dlpack::kDLCUDAHost, 0};
  EXPECT_TRUE(dlpack::PlanDLTensorImport(t).ok());
}

TEST(StridedImport, BadRanksAndMissingArraysAreRefused) {
  std::vector<float> buf(1);
  std::vector<int64_t> shape(kMaxImportRank + 1, 1);
  DLTensor t = Tensor(buf.data(), shape);
  EXPECT_NE(Error(dlpack::PlanDLTensorImport(t)).find("ndim 65"),
            std::string::npos);
  t.ndim = -1;
  EXPECT_FALSE(dlpack::PlanDLTensorImport(t).ok());
  t.ndim = 2;
  t.shape = nullptr;
  EXPECT_NE(Error(dlpack::PlanDLTensorImport(t)).find("no shape"),
            std::string::npos);
  t.ndim = 0;  // a scalar needs no shape array
  EXPECT_TRUE(dlpack::PlanDLTensorImport(t).ok());
}

TEST(StridedImport, BufferLengthMustMatchTheShape) {
  std::vector<float> buf = Iota(3);
  int64_t shape[] = {3};
  BufferView v{buf.data(), 8, 4, 1, shape, nullptr};
  EXPECT_EQ(Error(PlanBufferImport(v, DType::kFloat32)),
            "host buffer of 8 bytes does not match float32(3,)");
  v.len = 12;
  auto r = PlanBufferImport(v, DType::kFloat32);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->contiguous);
  EXPECT_EQ(Copy(*r), buf);
  v.len = -1;
  EXPECT_FALSE(PlanBufferImport(v, DType::kFloat32).ok());
  // An overflowing shape is refused before its size is computed.
  int64_t huge[] = {kI64Max, kI64Max};
  BufferView h{buf.data(), 12, 4, 2, huge, nullptr};
  EXPECT_NE(Error(PlanBufferImport(h, DType::kFloat32)).find("too large"),
            std::string::npos);
  BufferView no_shape{buf.data(), 12, 4, 1, nullptr, nullptr};
  EXPECT_FALSE(PlanBufferImport(no_shape, DType::kFloat32).ok());
}

TEST(StridedImport, StridedBuffersUseByteStrides) {
  // Byte strides need not be multiples of the item size (packed records).
  std::vector<uint8_t> bytes(64);
  std::iota(bytes.begin(), bytes.end(), uint8_t{0});
  int64_t shape[] = {3, 2}, strides[] = {13, 5};
  BufferView v{bytes.data() + 1, 3 * 2 * 4, 4, 2, shape, strides};
  const MemoryExtent all{bytes.data(), bytes.size()};
  auto r = PlanBufferImport(v, DType::kFloat32, all);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->contiguous);
  EXPECT_EQ(r->end, 13 * 2 + 5 + 4);
  std::vector<uint8_t> out(24);
  CopyStridedToDense(*r, out.data());
  const int64_t starts[] = {1, 6, 14, 19, 27, 32};
  for (int e = 0; e < 6; ++e) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(out[e * 4 + b], starts[e] + b);
  }
  // The same view reaching one byte past the extent.
  EXPECT_FALSE(PlanBufferImport(v, DType::kFloat32,
                                MemoryExtent{bytes.data(), 1 + 13 * 2 + 5 + 3})
                   .ok());
  // Item size and logical length must agree with the dtype.
  BufferView wrong_item = v;
  wrong_item.itemsize = 2;
  EXPECT_NE(Error(PlanBufferImport(wrong_item, DType::kFloat32, all))
                .find("items of 2 bytes"),
            std::string::npos);
  BufferView wrong_len = v;
  wrong_len.len = 4;
  EXPECT_FALSE(PlanBufferImport(wrong_len, DType::kFloat32, all).ok());
}

TEST(StridedImport, EveryElementSizeCopiesThroughTheStridedPath) {
  // Bytes numbered mod 251 (prime), so no two of the offsets read here
  // hold the same pattern.
  std::vector<uint8_t> bytes(1024);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i % 251);
  for (DType d : {DType::kInt8, DType::kInt16, DType::kFloat32, DType::kFloat64,
                  DType::kComplex64, DType::kComplex128}) {
    const int64_t size = static_cast<int64_t>(dtype_size(d));
    int64_t shape[] = {3, 4}, strides[] = {-size * 9, size * 2};
    BufferView v{bytes.data() + 600, 12 * size, size, 2, shape, strides};
    auto r = PlanBufferImport(v, d, MemoryExtent{bytes.data(), bytes.size()});
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::vector<uint8_t> out(static_cast<size_t>(12 * size));
    CopyStridedToDense(*r, out.data());
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) {
        const int64_t src = 600 - i * size * 9 + j * size * 2;
        EXPECT_EQ(0, std::memcmp(&out[(i * 4 + j) * size], &bytes[src], size))
            << dtype_name(d) << " " << i << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace baton
