#include "baton/backend/cpu/kernels/reduce.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "baton/backend/cpu/kernels/isa.h"
#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/backend/cpu/kernels/reduce_run.h"
#include "baton/backend/cpu/kernels/vector_loop.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::cpu {
namespace {

// The accumulator: double for float32 sums (the error of a long float sum
// grows with its length; a double one stays below float's rounding).
template <ReduceOp op, typename T>
using AccType =
    std::conditional_t<op == ReduceOp::kSum && std::is_same_v<T, float>, double,
                       ComputeType<T>>;

// A set of dimensions walked as one flat index (outermost first).
struct Odometer {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements of the input
  int64_t count() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
};

// Walks an Odometer from any flat position, tracking the input offset.
// Walks are made per output element, so the index lives inline (no heap
// allocation) for the usual few dimension groups.
class OdometerWalk {
 public:
  OdometerWalk(const Odometer& o, int64_t flat) : o_(o) {
    const size_t rank = o.sizes.size();
    if (rank > kInline) heap_.resize(rank);
    idx_ = rank > kInline ? heap_.data() : inline_;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      idx_[d] = flat % o.sizes[d];
      flat /= o.sizes[d];
      offset_ += idx_[d] * o.strides[d];
    }
  }
  OdometerWalk(const OdometerWalk&) = delete;
  OdometerWalk& operator=(const OdometerWalk&) = delete;

  int64_t offset() const { return offset_; }
  void Next() {
    for (int d = static_cast<int>(o_.sizes.size()) - 1; d >= 0; --d) {
      offset_ += o_.strides[d];
      if (++idx_[d] < o_.sizes[d]) return;
      offset_ -= o_.sizes[d] * o_.strides[d];
      idx_[d] = 0;
    }
  }

 private:
  static constexpr size_t kInline = 8;
  const Odometer& o_;
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
  int64_t* idx_;
  int64_t offset_ = 0;
};

using reduce_detail::Combine;
using reduce_detail::Finish;
using reduce_detail::ReduceRun;
using reduce_detail::ToAcc;

// The output of per-thread partials, combined in thread order.
template <ReduceOp op, typename T, typename A>
T CombinePartials(const A* partial, int64_t threads) {
  A acc = partial[0];
  for (int64_t t = 1; t < threads; ++t) acc = Combine<op, A>(acc, partial[t]);
  return Finish<op, T>(acc);
}

// How a reduction of n_out outputs of per_out elements each (per_out > 0)
// is split between threads: whole outputs per task, or, for a few long
// ones, every output in equal parts of its elements (a few per thread),
// whose partials are combined in order. Reduce over memory and ReduceRows split
// alike, so they add the same numbers in the same order.
struct RowSplit {
  bool by_outputs = true;
  int64_t outputs_per_task = 1;  // by_outputs
  int64_t parts = 1;             // otherwise: parts of `part` elements
  int64_t part = 0;
};

RowSplit PlanRowSplit(int64_t n_out, int64_t per_out) {
  RowSplit s;
  const int64_t threads = ThreadPool::Global().num_threads();
  if (n_out >= 4 * threads || n_out * per_out < 2 * kCheapGrain) {
    s.outputs_per_task = std::max<int64_t>(1, kCheapGrain / per_out);
    return s;
  }
  // Parts (and their partials) a few per thread, claimed as threads come
  // free; how many depends on the pool's size only, so a result does not
  // depend on which thread ran which part.
  s.by_outputs = false;
  s.parts = threads * ThreadPool::kChunksPerThread;
  s.part = (per_out + s.parts - 1) / s.parts;
  return s;
}

// The reduction of an input laid out as kept/reduced groups, where the
// innermost group is reduced (case "inner reduced") or kept ("inner kept").
template <ReduceOp op, typename T>
class Reducer {
 public:
  using A = AccType<op, T>;

  Reducer(const T* in, T* out, Odometer kept, Odometer reduced, int64_t inner,
          bool inner_reduced)
      : in_(in),
        out_(out),
        kept_(std::move(kept)),
        reduced_(std::move(reduced)),
        inner_(inner),
        inner_reduced_(inner_reduced) {}

  void Run() {
    if (inner_reduced_) {
      RunInnerReduced();
    } else {
      RunInnerKept();
    }
  }

 private:
  static T Final(A acc) { return Finish<op, T>(acc); }

  // Flat positions [q_lo, q_hi) of the (reduced odometer x inner run) space
  // of the output element whose input starts at `base`.
  A ReducePart(const T* base, int64_t q_lo, int64_t q_hi) const {
    A acc = scalar::ReduceInit<op, A>();
    if (q_lo >= q_hi) return acc;
    OdometerWalk walk(reduced_, q_lo / inner_);
    int64_t off = q_lo % inner_;
    for (int64_t q = q_lo; q < q_hi;) {
      const int64_t len = std::min(inner_ - off, q_hi - q);
      acc = Combine<op, A>(
          acc, ReduceRun<op, T, A>(base + walk.offset() + off, len));
      q += len;
      off = 0;
      walk.Next();
    }
    return acc;
  }

  void RunInnerReduced() {
    const int64_t n_out = kept_.count();
    const int64_t per_out = reduced_.count() * inner_;
    const RowSplit split = PlanRowSplit(n_out, per_out);
    if (split.by_outputs) {
      ParallelRanges(
          n_out, split.outputs_per_task,
          [&](int64_t lo, int64_t hi) {
            OdometerWalk walk(kept_, lo);
            for (int64_t e = lo; e < hi; ++e, walk.Next()) {
              out_[e] = Final(ReducePart(in_ + walk.offset(), 0, per_out));
            }
          },
          1);
      return;
    }
    // (Not std::vector: A may be bool.)
    const int64_t threads = split.parts;  // partials
    std::unique_ptr<A[]> partial(new A[threads]);
    OdometerWalk walk(kept_, 0);
    for (int64_t e = 0; e < n_out; ++e, walk.Next()) {
      const T* base = in_ + walk.offset();
      std::fill(partial.get(), partial.get() + threads,
                scalar::ReduceInit<op, A>());
      ParallelRanges(
          threads, 1,
          [&](int64_t lo, int64_t hi) {
            for (int64_t t = lo; t < hi; ++t) {
              partial[t] = ReducePart(base, std::min(per_out, t * split.part),
                                      std::min(per_out, (t + 1) * split.part));
            }
          },
          1);
      out_[e] = CombinePartials<op, T>(partial.get(), threads);
    }
  }

  // Accumulates reduced rows [r_lo, r_hi) of columns [c0, c0 + len) of the
  // output row whose input starts at `base` into acc[0, len).
  void AccumulateColumns(const T* base, int64_t r_lo, int64_t r_hi, int64_t c0,
                         int64_t len, A* acc) const {
    OdometerWalk walk(reduced_, r_lo);
    if constexpr (std::is_same_v<T, float> && std::is_same_v<A, double>) {
      // float32 sums: rows are added in float in groups of kGroup (full
      // vector width) and each group's sum is added into the double
      // accumulator, so the error stays near kGroup float roundings
      // instead of growing with the number of rows.
      constexpr int64_t kGroup = 16;
      std::unique_ptr<float[]> group(new float[len]);
      float* g = group.get();
      for (int64_t r0 = r_lo; r0 < r_hi; r0 += kGroup) {
        const int64_t r1 = std::min(r_hi, r0 + kGroup);
        const float* first = base + walk.offset() + c0;
        VectorLoop(0, len, [=](int64_t k) { g[k] = first[k]; });
        walk.Next();
        for (int64_t r = r0 + 1; r < r1; ++r, walk.Next()) {
          const float* p = base + walk.offset() + c0;
          VectorLoop(0, len, [=](int64_t k) { g[k] += p[k]; });
        }
        VectorLoop(0, len, [=](int64_t k) { acc[k] += g[k]; });
      }
      return;
    }
    for (int64_t r = r_lo; r < r_hi; ++r, walk.Next()) {
      const T* p = base + walk.offset() + c0;
      VectorLoop(0, len, [=](int64_t k) {
        acc[k] = Combine<op, A>(acc[k], ToAcc<A>(p[k]));
      });
    }
  }

  void RunInnerKept() {
    // Accumulator block of up to 64 KiB: it stays in L2 while each reduced
    // row streams through it, and each row is read in long contiguous runs
    // (short runs at a large stride defeat the prefetcher and the TLB).
    constexpr int64_t kCols = 64 * 1024 / sizeof(A);
    const int64_t rows = kept_.count();
    const int64_t n_red = reduced_.count();
    const int64_t col_blocks = (inner_ + kCols - 1) / kCols;
    const int64_t tasks = rows * col_blocks;
    const int64_t threads = ThreadPool::Global().num_threads();
    const int64_t work = rows * inner_ * n_red;
    // Splitting the reduced rows costs a partial row per thread, so it is
    // kept for long reductions (partials <= 1/8 of the input).
    if (tasks >= 2 * threads || work < 2 * kCheapGrain ||
        n_red < 16 * threads) {
      const int64_t per_task = std::min(inner_, kCols) * n_red;
      ParallelRanges(
          tasks, std::max<int64_t>(1, kCheapGrain / per_task),
          [&](int64_t lo, int64_t hi) {
            std::unique_ptr<A[]> acc_block(new A[std::min(inner_, kCols)]);
            A* acc = acc_block.get();
            for (int64_t t = lo; t < hi; ++t) {
              const int64_t row = t / col_blocks;
              const int64_t c0 = (t % col_blocks) * kCols;
              const int64_t len = std::min(kCols, inner_ - c0);
              std::fill(acc, acc + len, scalar::ReduceInit<op, A>());
              const T* base = in_ + OdometerWalk(kept_, row).offset();
              AccumulateColumns(base, 0, n_red, c0, len, acc);
              T* o = out_ + row * inner_ + c0;
              for (int64_t k = 0; k < len; ++k) o[k] = Final(acc[k]);
            }
          },
          1);
      return;
    }
    // Few output rows over many reduced rows: threads take equal parts of
    // the reduced rows; their partial rows are combined in order.
    const int64_t n_out = rows * inner_;
    std::unique_ptr<A[]> partial(new A[threads * n_out]);
    std::fill(partial.get(), partial.get() + threads * n_out,
              scalar::ReduceInit<op, A>());
    const int64_t part = (n_red + threads - 1) / threads;
    ParallelRanges(
        threads, 1,
        [&](int64_t lo, int64_t hi) {
          for (int64_t t = lo; t < hi; ++t) {
            const int64_t r_lo = std::min(n_red, t * part);
            const int64_t r_hi = std::min(n_red, (t + 1) * part);
            A* acc = partial.get() + t * n_out;
            for (int64_t row = 0; row < rows; ++row) {
              const T* base = in_ + OdometerWalk(kept_, row).offset();
              for (int64_t c0 = 0; c0 < inner_; c0 += kCols) {
                AccumulateColumns(base, r_lo, r_hi, c0,
                                  std::min(kCols, inner_ - c0),
                                  acc + row * inner_ + c0);
              }
            }
          }
        },
        1);
    for (int64_t i = 0; i < n_out; ++i) {
      A acc = partial[i];
      for (int64_t t = 1; t < threads; ++t) {
        acc = Combine<op, A>(acc, partial[t * n_out + i]);
      }
      out_[i] = Final(acc);
    }
  }

  const T* in_;
  T* out_;
  Odometer kept_;     // kept groups, without the inner one if it is kept
  Odometer reduced_;  // reduced groups, without the inner one if reduced
  int64_t inner_;
  bool inner_reduced_;
};

template <ReduceOp op, typename T>
void ReduceTyped(const T* in, const Shape& in_shape,
                 const std::vector<bool>& is_reduced, T* out) {
  using A = AccType<op, T>;
  const int rank = in_shape.rank();
  int64_t n_out = 1;
  bool empty = false;
  for (int d = 0; d < rank; ++d) {
    if (!is_reduced[d]) n_out *= in_shape[d];
    if (in_shape[d] == 0) empty = true;
  }
  if (n_out == 0) return;
  if (empty) {  // reducing nothing: the identity
    const T init = FromCompute<T>(
        static_cast<ComputeType<T>>(scalar::ReduceInit<op, A>()));
    std::fill(out, out + n_out, init);
    return;
  }
  // Groups of adjacent dims of one kind (size-1 dims dropped), outermost
  // first; a dense row-major input makes each group contiguous.
  std::vector<int64_t> sizes, strides;
  std::vector<bool> kinds;
  const std::vector<int64_t> in_strides = in_shape.strides();
  for (int d = 0; d < rank; ++d) {
    if (in_shape[d] == 1) continue;
    if (!kinds.empty() && kinds.back() == is_reduced[d]) {
      sizes.back() *= in_shape[d];
      strides.back() = in_strides[d];
    } else {
      sizes.push_back(in_shape[d]);
      strides.push_back(in_strides[d]);
      kinds.push_back(is_reduced[d]);
    }
  }
  if (sizes.empty()) {  // one element
    *out = Finish<op, T>(
        Combine<op, A>(scalar::ReduceInit<op, A>(), ToAcc<A>(*in)));
    return;
  }
  Odometer kept, reduced;
  for (size_t g = 0; g + 1 < sizes.size(); ++g) {
    Odometer& o = kinds[g] ? reduced : kept;
    o.sizes.push_back(sizes[g]);
    o.strides.push_back(strides[g]);
  }
  Reducer<op, T>(in, out, std::move(kept), std::move(reduced), sizes.back(),
                 kinds.back())
      .Run();
}

// A buffer of `n` elements for one thread's pieces: on the stack up to
// 16 KiB (a float32 piece), else on the heap.
template <typename T>
class PieceBuffer {
 public:
  explicit PieceBuffer(int64_t n) {
    if (static_cast<size_t>(n) * sizeof(T) > sizeof(local_)) {
      heap_.reset(new T[static_cast<size_t>(n)]);
    }
  }
  T* data() { return heap_ ? heap_.get() : reinterpret_cast<T*>(local_); }

 private:
  alignas(64) unsigned char local_[16 * 1024];
  std::unique_ptr<T[]> heap_;
};

// Where ReduceRowsTyped's pieces come from. `Piece(begin, n, buffer, &acc)`
// sets acc to ReduceRun's value over elements [begin, begin + n) of the
// virtual input (`buffer`: this thread's kReducePieceElements of scratch);
// `Rows(first, k, row, buffer, emit)` calls emit(j, acc) with that value for
// each of k whole rows of `row` elements from row `first` (k * row <=
// kReducePieceElements). Both return false when the source could not make
// its elements.
template <ReduceOp op, typename T>
struct ProducedPieces {  // a PieceProducer's elements, reduced from memory
  using A = AccType<op, T>;
  const PieceProducer& produce;
  bool Piece(int64_t begin, int64_t n, T* buffer, A* acc) const {
    if (!produce(begin, n, buffer)) return false;
    *acc = ReduceRun<op, T, A>(buffer, n);
    return true;
  }
  template <typename Emit>
  bool Rows(int64_t first, int64_t k, int64_t row, T* buffer,
            const Emit& emit) const {
    if (!produce(first * row, k * row, buffer)) return false;
    for (int64_t j = 0; j < k; ++j) {
      emit(j, ReduceRun<op, T, A>(buffer + j * row, row));
    }
    return true;
  }
};

struct SummedPieces {  // a float32 sum its source computes in registers
  const FloatPieceSum& sum;
  bool Piece(int64_t begin, int64_t n, float*, double* acc) const {
    *acc = sum(begin, n);
    return true;
  }
  template <typename Emit>
  bool Rows(int64_t first, int64_t k, int64_t row, float*,
            const Emit& emit) const {
    for (int64_t j = 0; j < k; ++j) emit(j, sum((first + j) * row, row));
    return true;
  }
};

// ReduceRows for one op and type: the split of RunInnerReduced (PlanRowSplit),
// each output's part added a piece of kReducePieceElements at a time from the
// part's start -- the blocks ReduceRun adds up over memory -- so every
// addition is the one Reduce makes. `pieces`: ProducedPieces or
// SummedPieces.
template <ReduceOp op, typename T, typename Pieces>
bool ReduceRowsTyped(int64_t rows, int64_t row, const Pieces& pieces, T* out) {
  using A = AccType<op, T>;
  std::atomic<bool> failed{false};
  // Positions [lo, hi) of output r.
  auto reduce_part = [&](int64_t r, int64_t lo, int64_t hi, T* buffer) {
    A acc = scalar::ReduceInit<op, A>();
    for (int64_t b = lo; b < hi; b += kReducePieceElements) {
      const int64_t n = std::min(kReducePieceElements, hi - b);
      A piece;
      if (!pieces.Piece(r * row + b, n, buffer, &piece)) {
        failed.store(true, std::memory_order_relaxed);
        break;
      }
      acc = Combine<op, A>(acc, piece);
    }
    return acc;
  };
  const int64_t piece = std::min(rows * row, kReducePieceElements);
  const RowSplit split = PlanRowSplit(rows, row);
  if (split.by_outputs) {
    ParallelRanges(
        rows, split.outputs_per_task,
        [&](int64_t lo, int64_t hi) {
          PieceBuffer<T> buffer(piece);
          T* buf = buffer.data();
          if (row > kReducePieceElements) {
            for (int64_t e = lo; e < hi && !failed.load(); ++e) {
              out[e] = Finish<op, T>(reduce_part(e, 0, row, buf));
            }
            return;
          }
          // Short rows: a piece holds several whole rows.
          const int64_t per_piece = kReducePieceElements / row;
          for (int64_t e = lo; e < hi; e += per_piece) {
            const int64_t k = std::min(per_piece, hi - e);
            T* row_out = out + e;
            auto finish = [row_out](int64_t j, A acc) {
              row_out[j] = Finish<op, T>(
                  Combine<op, A>(scalar::ReduceInit<op, A>(), acc));
            };
            if (!pieces.Rows(e, k, row, buf, finish)) {
              failed.store(true, std::memory_order_relaxed);
              return;
            }
          }
        },
        1);
    return !failed.load();
  }
  const int64_t threads = split.parts;  // partials
  std::unique_ptr<A[]> partial(new A[threads]);
  for (int64_t e = 0; e < rows; ++e) {
    std::fill(partial.get(), partial.get() + threads,
              scalar::ReduceInit<op, A>());
    ParallelRanges(
        threads, 1,
        [&](int64_t lo, int64_t hi) {
          PieceBuffer<T> buffer(piece);
          for (int64_t t = lo; t < hi; ++t) {
            partial[t] =
                reduce_part(e, std::min(row, t * split.part),
                            std::min(row, (t + 1) * split.part), buffer.data());
          }
        },
        1);
    if (failed.load()) return false;
    out[e] = CombinePartials<op, T>(partial.get(), threads);
  }
  return true;
}

}  // namespace

void Reduce(ReduceOp op, DType dtype, const void* in, const Shape& in_shape,
            std::span<const int64_t> axes, void* out) {
  std::vector<bool> is_reduced(in_shape.rank(), false);
  for (int64_t a : axes) is_reduced[a] = true;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitReduceOp(op, [&](auto op_c) {
      ReduceTyped<decltype(op_c)::value, T>(static_cast<const T*>(in), in_shape,
                                            is_reduced, static_cast<T*>(out));
    });
  });
}

bool ReduceRows(ReduceOp op, DType dtype, int64_t rows, int64_t row,
                const PieceProducer& produce, void* out) {
  bool ok = true;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitReduceOp(op, [&](auto op_c) {
      constexpr ReduceOp kOp = decltype(op_c)::value;
      T* o = static_cast<T*>(out);
      if (rows == 0) return;
      if (row == 0) {  // reducing nothing: the identity
        using A = AccType<kOp, T>;
        std::fill(o, o + rows, Finish<kOp, T>(scalar::ReduceInit<kOp, A>()));
        return;
      }
      ok = ReduceRowsTyped<kOp, T>(rows, row, ProducedPieces<kOp, T>{produce},
                                   o);
    });
  });
  return ok;
}

void SumRowsFloat32(int64_t rows, int64_t row, const FloatPieceSum& sum,
                    float* out) {
  if (rows == 0) return;
  if (row == 0) {
    std::fill(out, out + rows, 0.0f);
    return;
  }
  ReduceRowsTyped<ReduceOp::kSum, float>(rows, row, SummedPieces{sum}, out);
}

}  // namespace baton::cpu
