#include "baton/backend/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <thread>

#include "baton/backend/cuda/cuda_error.h"
#include "baton/backend/cuda/cuda_region_provider.h"
#include "baton/backend/cuda/device_clock.h"
#include "baton/runtime/fork_guard.h"
#include "baton/runtime/parallel_copy.h"
#include "baton/runtime/trace_recorder.h"

namespace baton::cuda {
namespace {

const char* StreamName(QueueKind queue) {
  switch (queue) {
    case QueueKind::kCompute:
      return "compute";
    case QueueKind::kHostToDevice:
      return "host-to-device";
    case QueueKind::kDeviceToHost:
      return "device-to-host";
  }
  return "unknown";
}

// "cuda:0: copying 4096 bytes on the host-to-device stream".
std::string Doing(int ordinal, QueueKind queue, const std::string& what) {
  return "cuda:" + std::to_string(ordinal) + ": " + what + " on the " +
         StreamName(queue) + " stream";
}

// True for memory the CPU may touch directly: pageable memory CUDA does not
// know and page-locked host memory. Device and managed memory, and anything
// CUDA cannot classify, go through CUDA copies.
bool IsHostMemory(const void* ptr) {
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, ptr);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeUnregistered ||
         attributes.type == cudaMemoryTypeHost;
}

// A clock anchor of one device (device_clock.h): a timing event the device
// passed, and the host's steady time read right after the host saw it
// pass. Shared by the current anchor of its device and the spans timed
// against it; the event is destroyed with the last of them.
struct ClockAnchor {
  cudaEvent_t event = nullptr;
  int64_t host_ns = 0;
  ClockAnchor() = default;
  ClockAnchor(const ClockAnchor&) = delete;
  ClockAnchor& operator=(const ClockAnchor&) = delete;
  ~ClockAnchor() {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
};

}  // namespace

// The timing of one piece of stream work (CudaBackend::BeginTiming): the
// anchor, the timing event recorded before the work, and -- written by the
// completion thread before it completes the work's Event, `measured` last
// (release) -- the span on the steady clock.
struct CudaSpanTiming {
  std::shared_ptr<const ClockAnchor> anchor;
  cudaEvent_t begin = nullptr;
  int64_t enqueued_ns = 0;  // host time just before `begin` was recorded
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::atomic<bool> measured{false};
  CudaSpanTiming() = default;
  CudaSpanTiming(const CudaSpanTiming&) = delete;
  CudaSpanTiming& operator=(const CudaSpanTiming&) = delete;
  ~CudaSpanTiming() {
    if (begin != nullptr) (void)cudaEventDestroy(begin);
  }
};

namespace {

// The device marker of a CudaBackend event: the CUDA event recorded behind
// the work, and its timing when a trace recording was enabled (then the
// event is a timing one). Destroyed with the last Event handle that carries
// it (CUDA defers the destruction until the device has passed it).
struct CudaMarker {
  cudaEvent_t event = nullptr;
  int ordinal = 0;
  std::unique_ptr<CudaSpanTiming> timing;  // null: untimed
  ~CudaMarker() {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
};

// Converts `marker`'s timing to the steady clock once the device has passed
// its event, which the host saw at `observed_ns` (on the completion thread;
// the device is current). A failed measurement leaves the span unmeasured.
void Measure(CudaMarker& marker, int64_t observed_ns) {
  CudaSpanTiming& t = *marker.timing;
  float to_begin_ms = 0.0f, duration_ms = 0.0f;
  if (cudaEventElapsedTime(&to_begin_ms, t.anchor->event, t.begin) !=
          cudaSuccess ||
      cudaEventElapsedTime(&duration_ms, t.begin, marker.event) !=
          cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: the work itself is done
    return;
  }
  const SteadySpan span = DeviceSpanToSteady(
      t.anchor->host_ns, to_begin_ms, duration_ms, t.enqueued_ns, observed_ns);
  t.begin_ns = span.begin_ns;
  t.end_ns = span.end_ns;
  t.measured.store(true, std::memory_order_release);
}

}  // namespace

// The completion thread of one device: waits for its CUDA events in the
// order they were recorded and completes their Events.
class CudaBackend::Completions {
 public:
  explicit Completions(int ordinal) : ordinal_(ordinal) {
    ForkGuard::ThreadStarted();
    thread_ = std::thread([this] { Loop(); });
    pthread_setname_np(thread_.native_handle(), "cuda-completion");
  }
  ~Completions() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (ForkGuard::InForkedChild()) {
      thread_.detach();
      return;
    }
    thread_.join();
    ForkGuard::ThreadStopped();
    if (anchor_stream_ != nullptr) {
      // Idle: each anchor event was waited for. Teardown reports nothing.
      if (cudaSetDevice(ordinal_) == cudaSuccess) {
        (void)cudaStreamDestroy(anchor_stream_);
      }
      (void)cudaGetLastError();
    }
  }
  void Push(std::shared_ptr<CudaMarker> marker, Event event, std::string doing,
            std::shared_ptr<void> keep_alive) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(Item{std::move(marker), std::move(event),
                            std::move(doing), std::move(keep_alive)});
    }
    cv_.notify_one();
  }
  // OK, or why the device is unusable (a sticky error was seen).
  Status unusable() const {
    std::lock_guard<std::mutex> lock(mu_);
    return unusable_;
  }
  // The device's clock anchor for a span begun now (the device current on
  // the calling thread): the current one while fresh, else a new one --
  // recorded on the anchor stream (created on first use) and waited for;
  // other callers wait meanwhile. Null if CUDA refused.
  std::shared_ptr<const ClockAnchor> Anchor() {
    std::lock_guard<std::mutex> lock(anchor_mu_);
    if (anchor_ != nullptr &&
        AnchorIsFresh(anchor_->host_ns, TraceRecorder::NowNs())) {
      return anchor_;
    }
    if (anchor_stream_ == nullptr &&
        cudaStreamCreateWithFlags(&anchor_stream_, cudaStreamNonBlocking) !=
            cudaSuccess) {
      anchor_stream_ = nullptr;
      (void)cudaGetLastError();
      return nullptr;
    }
    auto anchor = std::make_shared<ClockAnchor>();
    if (cudaEventCreate(&anchor->event) != cudaSuccess) {
      anchor->event = nullptr;
      (void)cudaGetLastError();
      return nullptr;
    }
    if (cudaEventRecord(anchor->event, anchor_stream_) != cudaSuccess ||
        cudaEventSynchronize(anchor->event) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    anchor->host_ns = TraceRecorder::NowNs();
    anchor_ = std::move(anchor);
    return anchor_;
  }

 private:
  struct Item {
    std::shared_ptr<CudaMarker> marker;
    Event event;
    std::string doing;
    std::shared_ptr<void> keep_alive;
  };
  void Loop() {
    const bool selected = cudaSetDevice(ordinal_) == cudaSuccess;
    for (;;) {
      Item item;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !items_.empty(); });
        if (items_.empty()) return;  // stopping and drained
        item = std::move(items_.front());
        items_.pop_front();
      }
      Status status = unusable();
      if (status.ok()) {
        const cudaError_t error = selected
                                      ? cudaEventSynchronize(item.marker->event)
                                      : cudaErrorInvalidDevice;
        if (error == cudaSuccess && item.marker->timing != nullptr) {
          Measure(*item.marker, TraceRecorder::NowNs());
        }
        if (error != cudaSuccess) {
          // Errors that surface here are asynchronous faults of the device
          // (an illegal address, a launch failure): sticky for the process.
          status = CudaError(error, "cudaEventSynchronize", item.doing);
          std::lock_guard<std::mutex> lock(mu_);
          unusable_ = Internal(
              "cuda:" + std::to_string(ordinal_) + " is unusable: " +
              status.message() +
              ". CUDA keeps such an error for the rest of the process: every "
              "pending and later operation on this device fails; restart the "
              "process");
        }
      }
      item.keep_alive.reset();
      item.event.SetStatus(std::move(status));
    }
  }

  const int ordinal_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> items_;  // guarded by mu_
  bool stopping_ = false;   // guarded by mu_
  Status unusable_;         // guarded by mu_
  std::mutex anchor_mu_;
  cudaStream_t anchor_stream_ = nullptr;       // guarded by anchor_mu_
  std::shared_ptr<const ClockAnchor> anchor_;  // guarded by anchor_mu_
  std::thread thread_;
};

CudaBackend::CudaBackend(int device_count)
    : streams_(static_cast<size_t>(std::max(device_count, 0))),
      completions_(static_cast<size_t>(std::max(device_count, 0))) {
  for (auto& per_device : streams_) per_device.fill(nullptr);
}

CudaBackend::~CudaBackend() {
  completions_.clear();  // drains: every event completes first
  for (size_t ordinal = 0; ordinal < streams_.size(); ++ordinal) {
    for (CUstream_st* stream : streams_[ordinal]) {
      if (stream == nullptr) continue;
      // Teardown: nothing to report to, and the stream is idle (the
      // completion threads saw all its work done).
      if (cudaSetDevice(static_cast<int>(ordinal)) == cudaSuccess) {
        (void)cudaStreamDestroy(stream);
      }
      (void)cudaGetLastError();
    }
  }
}

std::unique_ptr<RegionProvider> CudaBackend::MakeRegionProvider(
    int device_ordinal, MemoryKind kind) {
  // No CUDA call here: a Device is created without touching its GPU (the
  // context is made on the first allocation or copy).
  return MakeCudaRegionProvider(device_ordinal, kind);
}

Status CudaBackend::CheckOrdinal(int ordinal) const {
  if (ordinal >= 0 && ordinal < device_count()) return OkStatus();
  return InvalidArgument("CUDA device ordinal " + std::to_string(ordinal) +
                         " is out of range: the CUDA backend has " +
                         std::to_string(device_count()) + " device(s)");
}

Status CudaBackend::StreamFor(int ordinal, QueueKind queue,
                              CUstream_st** stream) {
  BATON_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  BATON_RETURN_IF_ERROR(
      CudaError(cudaSetDevice(ordinal), "cudaSetDevice",
                "cuda:" + std::to_string(ordinal) + ": selecting the device"));
  std::lock_guard<std::mutex> lock(mu_);
  if (completions_[ordinal] != nullptr) {
    BATON_RETURN_IF_ERROR(completions_[ordinal]->unusable());
  } else {
    completions_[ordinal] = std::make_unique<Completions>(ordinal);
  }
  CUstream_st*& slot = streams_[ordinal][static_cast<int>(queue)];
  if (slot == nullptr) {
    cudaStream_t created = nullptr;
    BATON_RETURN_IF_ERROR(
        CudaError(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags",
                  Doing(ordinal, queue, "creating the stream")));
    slot = created;
  }
  *stream = slot;
  return OkStatus();
}

std::unique_ptr<CudaSpanTiming> CudaBackend::BeginTiming(int ordinal,
                                                         cudaStream_t stream) {
  if (!TraceRecorder::Global().enabled()) return nullptr;
  Completions* completions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    completions = completions_[ordinal].get();  // StreamFor made it
  }
  auto timing = std::make_unique<CudaSpanTiming>();
  timing->anchor = completions->Anchor();
  if (timing->anchor == nullptr) return nullptr;
  if (cudaEventCreate(&timing->begin) != cudaSuccess) {
    timing->begin = nullptr;
    (void)cudaGetLastError();
    return nullptr;
  }
  timing->enqueued_ns = TraceRecorder::NowNs();
  if (cudaEventRecord(timing->begin, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return timing;
}

Event CudaBackend::Complete(int ordinal, CUstream_st* stream, Status enqueued,
                            const std::string& doing,
                            std::shared_ptr<void> keep_alive,
                            std::unique_ptr<CudaSpanTiming> timing) {
  auto marker = std::make_shared<CudaMarker>();
  marker->ordinal = ordinal;
  // Work that failed to enqueue gets no span (its Event carries no marker).
  if (enqueued.ok()) marker->timing = std::move(timing);
  Status recorded = CudaError(
      cudaEventCreateWithFlags(&marker->event, marker->timing != nullptr
                                                   ? cudaEventDefault
                                                   : cudaEventDisableTiming),
      "cudaEventCreateWithFlags", doing);
  if (recorded.ok()) {
    recorded = CudaError(cudaEventRecord(marker->event, stream),
                         "cudaEventRecord", doing);
  }
  if (!recorded.ok()) {
    // Without a marker nothing can tell when the work is done: wait here.
    Status synced =
        CudaError(cudaStreamSynchronize(stream), "cudaStreamSynchronize", doing);
    Status first = !enqueued.ok() ? enqueued : recorded;
    return Event::Failed(first.ok() ? synced : first);
  }
  Completions* completions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    completions = completions_[ordinal].get();
  }
  Event done = Event::Create();
  if (!enqueued.ok()) {
    // Part of the work may be on the stream: fail with the enqueue error
    // once the device is past it (keep_alive is released only then).
    Event passed = Event::Create();
    completions->Push(std::move(marker), passed, doing, std::move(keep_alive));
    passed.OnReady([done, enqueued](const Status&) { done.SetError(enqueued); });
    return done;
  }
  done.SetDeviceMarker(this, marker);
  completions->Push(std::move(marker), done, doing, std::move(keep_alive));
  return done;
}

Event CudaBackend::CopyAsync(int device_ordinal, QueueKind queue, void* dst,
                             const void* src, size_t bytes) {
  if (bytes == 0) return Event::Ready();
  if (Status s = CheckOrdinal(device_ordinal); !s.ok()) return Event::Failed(s);
  if (IsHostMemory(dst) && IsHostMemory(src)) {
    ParallelCopy(dst, src, bytes);  // no stream, no device switch
    return Event::Ready();
  }
  cudaStream_t stream = nullptr;
  if (Status s = StreamFor(device_ordinal, queue, &stream); !s.ok()) {
    return Event::Failed(s);
  }
  const std::string doing =
      Doing(device_ordinal, queue, "copying " + std::to_string(bytes) + " bytes");
  std::unique_ptr<CudaSpanTiming> timing = BeginTiming(device_ordinal, stream);
  Status enqueued =
      CudaError(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
                "cudaMemcpyAsync", doing);
  return Complete(device_ordinal, stream, std::move(enqueued), doing, nullptr,
                  std::move(timing));
}

Event CudaBackend::FillAsync(int device_ordinal, QueueKind queue, void* dst,
                             int64_t count, size_t elem_bytes,
                             uint64_t pattern) {
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 &&
      elem_bytes != 8) {
    return Event::Failed(InvalidArgument(
        "Fill: element size " + std::to_string(elem_bytes) +
        " is not 1, 2, 4 or 8 bytes"));
  }
  if (count <= 0) return Event::Ready();
  const size_t total = static_cast<size_t>(count) * elem_bytes;
  if (Status s = CheckOrdinal(device_ordinal); !s.ok()) return Event::Failed(s);
  if (IsHostMemory(dst)) {
    FillHost(dst, count, elem_bytes, pattern);
    return Event::Ready();
  }
  cudaStream_t stream = nullptr;
  if (Status s = StreamFor(device_ordinal, queue, &stream); !s.ok()) {
    return Event::Failed(s);
  }
  const std::string doing =
      Doing(device_ordinal, queue,
            "filling " + std::to_string(count) + " elements of " +
                std::to_string(elem_bytes) + " bytes");

  // The element's bytes, little-endian (what FillHost writes).
  unsigned char element[8];
  std::memcpy(element, &pattern, sizeof(element));
  const bool byte_uniform =
      std::all_of(element, element + elem_bytes,
                  [&](unsigned char b) { return b == element[0]; });
  if (byte_uniform) {
    std::unique_ptr<CudaSpanTiming> timing =
        BeginTiming(device_ordinal, stream);
    Status enqueued = CudaError(cudaMemsetAsync(dst, element[0], total, stream),
                                "cudaMemsetAsync", doing);
    return Complete(device_ordinal, stream, std::move(enqueued), doing, nullptr,
                    std::move(timing));
  }

  // A general pattern: a seed of whole elements from the host, then the
  // filled prefix doubles with device-to-device copies (log2 steps).
  // kFillSeedBytes is a multiple of every element size, so the seed is too.
  // The seed lives until the device has read it (Complete's keep_alive).
  const size_t seed_bytes = std::min(total, kFillSeedBytes);
  auto seed = std::make_shared<std::vector<unsigned char>>(seed_bytes);
  FillHost(seed->data(), static_cast<int64_t>(seed_bytes / elem_bytes),
           elem_bytes, pattern);
  char* out = static_cast<char*>(dst);
  std::unique_ptr<CudaSpanTiming> timing = BeginTiming(device_ordinal, stream);
  Status status = CudaError(cudaMemcpyAsync(out, seed->data(), seed_bytes,
                                            cudaMemcpyHostToDevice, stream),
                            "cudaMemcpyAsync", doing);
  for (size_t filled = seed_bytes; status.ok() && filled < total;) {
    const size_t n = std::min(filled, total - filled);
    status = CudaError(
        cudaMemcpyAsync(out + filled, out, n, cudaMemcpyDeviceToDevice, stream),
        "cudaMemcpyAsync", doing);
    filled += n;
  }
  return Complete(device_ordinal, stream, std::move(status), doing,
                  std::move(seed), std::move(timing));
}

Event CudaBackend::LaunchAsync(
    int device_ordinal, QueueKind queue, const std::string& what,
    const std::function<Status(CUstream_st*)>& enqueue,
    std::shared_ptr<void> keep_alive) {
  if (Status s = CheckOrdinal(device_ordinal); !s.ok()) return Event::Failed(s);
  cudaStream_t stream = nullptr;
  if (Status s = StreamFor(device_ordinal, queue, &stream); !s.ok()) {
    return Event::Failed(s);
  }
  const std::string doing = Doing(device_ordinal, queue, what);
  std::unique_ptr<CudaSpanTiming> timing = BeginTiming(device_ordinal, stream);
  Status enqueued = enqueue(stream);
  // `enqueue` may have run code that made another device current (a host
  // callback's own work): the event must be made on this stream's device.
  Status selected =
      CudaError(cudaSetDevice(device_ordinal), "cudaSetDevice", doing);
  if (enqueued.ok() && !selected.ok()) enqueued = std::move(selected);
  return Complete(device_ordinal, stream, std::move(enqueued), doing,
                  std::move(keep_alive), std::move(timing));
}

bool CudaBackend::WaitOnStream(int device_ordinal, QueueKind queue,
                               const Event& event) {
  std::shared_ptr<void> marker = event.DeviceMarker(this);
  if (marker == nullptr) return false;
  cudaStream_t stream = nullptr;
  if (!StreamFor(device_ordinal, queue, &stream).ok()) return false;
  const auto* cuda_marker = static_cast<const CudaMarker*>(marker.get());
  // Across devices too: a stream may wait for another device's event.
  if (cudaStreamWaitEvent(stream, cuda_marker->event, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;  // the caller waits on the host instead
  }
  return true;
}

bool CudaBackend::DeviceSpan(const Event& done, int64_t* begin_ns,
                             int64_t* end_ns) const {
  if (!done.valid() || !done.IsReady()) return false;
  std::shared_ptr<void> marker = done.DeviceMarker(this);
  if (marker == nullptr) return false;
  const CudaSpanTiming* timing =
      static_cast<const CudaMarker*>(marker.get())->timing.get();
  if (timing == nullptr || !timing->measured.load(std::memory_order_acquire)) {
    return false;
  }
  *begin_ns = timing->begin_ns;
  *end_ns = timing->end_ns;
  return true;
}

}  // namespace baton::cuda
