// The kinds and options of the IR's linalg op (compiler/op_attrs.h,
// LinalgAttrs, which documents them), shared by the compiler and the LAPACK
// routines that compute them (core/linalg_lapack.h), so the two layers
// cannot describe an op differently.
#pragma once

#include <cstdint>
#include <string_view>

namespace baton {

enum class LinalgKind : uint8_t {
  kCholesky,
  kTriangularSolve,
  kLu,
  kQr,
  kEigh,
  kSvd,
  kSchur,
};
inline constexpr int kNumLinalgKinds = 7;

// "cholesky", "triangular_solve", "lu", "qr", "eigh", "svd", "schur".
constexpr std::string_view linalg_kind_name(LinalgKind kind) {
  switch (kind) {
    case LinalgKind::kCholesky:
      return "cholesky";
    case LinalgKind::kTriangularSolve:
      return "triangular_solve";
    case LinalgKind::kLu:
      return "lu";
    case LinalgKind::kQr:
      return "qr";
    case LinalgKind::kEigh:
      return "eigh";
    case LinalgKind::kSvd:
      return "svd";
    case LinalgKind::kSchur:
      return "schur";
  }
  return "?";
}

// Which variant of a kind an op computes (only the fields its kind reads
// matter; LinalgAttrs documents which).
struct LinalgOptions {
  LinalgKind kind = LinalgKind::kCholesky;
  bool lower = true;
  bool transpose_a = false;
  bool left_side = true;
  bool unit_diagonal = false;
  bool full_matrices = false;
  bool operator==(const LinalgOptions&) const = default;
};

}  // namespace baton
