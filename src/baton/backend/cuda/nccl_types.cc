// NCCL's data types and reduction ops for baton's (nccl_process_group.h):
// pure, built in every configuration; nccl_process_group.cc checks the
// values against nccl.h.
#include "baton/backend/cuda/nccl_process_group.h"

namespace baton::cuda {

Result<int> NcclDataType(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return 0;      // ncclInt8
    case DType::kUInt8: return 1;     // ncclUint8
    case DType::kInt32: return 2;     // ncclInt32
    case DType::kUInt32: return 3;    // ncclUint32
    case DType::kInt64: return 4;     // ncclInt64
    case DType::kFloat16: return 6;   // ncclFloat16
    case DType::kFloat32: return 7;   // ncclFloat32
    case DType::kFloat64: return 8;   // ncclFloat64
    case DType::kBFloat16: return 9;  // ncclBfloat16
    case DType::kBool:
    case DType::kInt16:
    case DType::kComplex64:
    case DType::kComplex128:
      break;
  }
  return InvalidArgument("NCCL has no data type for " +
                         std::string(dtype_name(dtype)) +
                         " (bool, int16 and complex collectives go through "
                         "another dtype, e.g. complex as pairs of floats)");
}

int NcclRedOp(collectives::ReduceOp op) {
  switch (op) {
    case collectives::ReduceOp::kSum: return 0;  // ncclSum
    case collectives::ReduceOp::kMax: return 2;  // ncclMax
    case collectives::ReduceOp::kMin: return 3;  // ncclMin
  }
  return 0;
}

}  // namespace baton::cuda
