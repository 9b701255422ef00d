#include "baton/compiler/literal.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "baton/compiler/value_type.h"

namespace baton::compiler {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "baton::compiler::Literal: %s\n", message.c_str());
  std::abort();
}

template <typename F>
std::string ShortestFloat(F value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return "?";
  return std::string(buf, end);
}

// Shortest "%g" text that converts back to the same 16-bit float: "0.1"
// for bfloat16(0.1), where the exact value is 0.100097656.
template <typename Half>
std::string ShortestHalf(Half value) {
  const float f = ToCompute(value);
  if (f != f) return "nan";
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, f);
    if (FromCompute<Half>(std::strtof(buf, nullptr)).bits == value.bits) break;
  }
  return buf;
}

// Appends the values of dimensions [dim, rank) starting at element *next.
void AppendNested(const Literal& lit, int dim, int64_t* next,
                  std::string* out) {
  const Shape& shape = lit.shape();
  if (dim == shape.rank()) {
    *out += lit.ElementToString((*next)++);
    return;
  }
  *out += "{";
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) *out += ", ";
    AppendNested(lit, dim + 1, next, out);
  }
  *out += "}";
}

}  // namespace

Literal::Literal(Shape shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  for (int64_t d : shape_.dims()) {
    if (d < 0) Die("negative dimension in shape " + shape_.to_string());
  }
  bytes_.assign(static_cast<size_t>(shape_.num_elements()) * dtype_size(dtype),
                0);
}

Literal Literal::FromBytes(Shape shape, DType dtype, const void* data) {
  Literal lit(std::move(shape), dtype);
  if (!lit.bytes_.empty()) {
    std::memcpy(lit.bytes_.data(), data, lit.bytes_.size());
  }
  return lit;
}

Literal Literal::FromDoubles(DType dtype, Shape shape,
                             const std::vector<double>& values) {
  Literal lit(std::move(shape), dtype);
  lit.CheckCount(static_cast<int64_t>(values.size()));
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = lit.mutable_data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      out[i] = ConvertElement<T, double>(values[i]);
    }
  });
  return lit;
}

double Literal::GetAsDouble(int64_t i) const {
  return VisitDType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return ConvertElement<double, T>(data<T>()[i]);
  });
}

int64_t Literal::GetAsInt64(int64_t i) const {
  return VisitDType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return ConvertElement<int64_t, T>(data<T>()[i]);
  });
}

std::string Literal::ElementToString(int64_t i) const {
  return VisitDType(dtype_, [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    const T v = data<T>()[i];
    if constexpr (std::is_same_v<T, bool>) {
      return v ? "true" : "false";
    } else if constexpr (kIsComplex<T>) {
      // numpy's form: (1+2j), (1-0j), (nan+infj).
      const auto im = v.imag();
      return "(" + ShortestFloat(v.real()) + (std::signbit(im) ? "-" : "+") +
             ShortestFloat(std::abs(im)) + "j)";
    } else if constexpr (std::is_same_v<T, double>) {
      return ShortestFloat(v);
    } else if constexpr (std::is_same_v<T, float>) {
      return ShortestFloat(v);
    } else if constexpr (std::is_floating_point_v<ComputeType<T>>) {
      return ShortestHalf(v);
    } else {
      return std::to_string(static_cast<int64_t>(v));
    }
  });
}

std::string Literal::ValuesToString() const {
  if (num_elements() == 0) {
    // Nesting would hide which dimension is empty; the type says it.
    return "{}";
  }
  std::string out;
  int64_t next = 0;
  AppendNested(*this, 0, &next, &out);
  return out;
}

std::string Literal::ToString() const {
  return std::string(dtype_short_name(dtype_)) + DimsToString(shape_) + " " +
         ValuesToString();
}

void Literal::CheckType(DType requested) const {
  if (requested != dtype_) {
    Die("typed access as " + std::string(dtype_name(requested)) +
        " to a literal of dtype " + std::string(dtype_name(dtype_)));
  }
}

void Literal::CheckCount(int64_t num_values) const {
  if (num_values != num_elements()) {
    Die(std::to_string(num_values) + " values given for shape " +
        shape_.to_string() + " (" + std::to_string(num_elements()) +
        " elements)");
  }
}

}  // namespace baton::compiler
