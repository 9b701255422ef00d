#include "baton/runtime/tracked_buffer.h"

#include <algorithm>

namespace baton {

TrackedBuffer::TrackedBuffer(MemorySpace* space, void* data, size_t bytes,
                             bool borrowed, std::function<void()> on_release)
    : space_(space),
      data_(data),
      size_(bytes),
      borrowed_(borrowed),
      on_release_(std::move(on_release)),
      definition_(Event::Ready()) {}

Result<std::shared_ptr<TrackedBuffer>> TrackedBuffer::Allocate(
    MemorySpace* space, size_t bytes, int queue_id, AllocationLabel label) {
  BATON_ASSIGN_OR_RETURN(void* data,
                         space->Allocate(bytes, queue_id, std::move(label)));
  return std::shared_ptr<TrackedBuffer>(
      new TrackedBuffer(space, data, bytes, /*borrowed=*/false, nullptr));
}

std::shared_ptr<TrackedBuffer> TrackedBuffer::Borrow(
    MemorySpace* space, void* data, size_t bytes,
    std::function<void()> on_release) {
  return std::shared_ptr<TrackedBuffer>(new TrackedBuffer(
      space, data, bytes, /*borrowed=*/true, std::move(on_release)));
}

TrackedBuffer::~TrackedBuffer() {
  // No other thread can reach this object now; no lock needed.
  std::vector<Event> pending = usage_;
  pending.push_back(definition_);
  if (host_write_.valid()) pending.push_back(host_write_);
  if (!borrowed_) {
    space_->FreeAfter(data_, pending);
  } else if (on_release_) {
    JoinEvents(pending).OnReady(
        [cb = std::move(on_release_)](const Status&) { cb(); });
  }
}

void TrackedBuffer::SetDefinitionEvent(Event e) {
  std::lock_guard<std::mutex> lock(mu_);
  definition_ = std::move(e);
}

Event TrackedBuffer::definition_event() const {
  std::lock_guard<std::mutex> lock(mu_);
  return definition_;
}

std::vector<Event> TrackedBuffer::ReadDependencies() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Event> deps{definition_};
  if (host_write_.valid()) deps.push_back(host_write_);
  return deps;
}

Status TrackedBuffer::BeginUsage() {
  std::lock_guard<std::mutex> lock(mu_);
  if (exclusive_) {
    return FailedPrecondition(
        "the buffer is being donated or overwritten; it cannot be used");
  }
  ++enqueues_in_progress_;
  return OkStatus();
}

void TrackedBuffer::EndUsage(Event done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done.valid()) {
      // Keep one event per queue: a later event on an in-order queue implies
      // the earlier ones. "Later" is queue order, not the order of EndUsage
      // calls, which racing enqueuers may make in either order. Events of no
      // queue are kept until they are ready.
      const int q = done.queue_id();
      bool replaced = false;
      if (q != kNoQueue) {
        for (Event& e : usage_) {
          if (e.queue_id() == q) {
            if (done.sequence() > e.sequence()) e = done;
            replaced = true;
            break;
          }
        }
      }
      if (!replaced) {
        usage_.erase(std::remove_if(usage_.begin(), usage_.end(),
                                    [](const Event& e) {
                                      return e.queue_id() == kNoQueue &&
                                             e.IsReady();
                                    }),
                     usage_.end());
        usage_.push_back(std::move(done));
      }
    }
    --enqueues_in_progress_;
  }
  cv_.notify_all();
}

std::vector<Event> TrackedBuffer::AllEvents() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Event> all = usage_;
  all.push_back(definition_);
  if (host_write_.valid()) all.push_back(host_write_);
  return all;
}

Status TrackedBuffer::AddExternalReference(const std::string& holder) {
  std::lock_guard<std::mutex> lock(mu_);
  if (exclusive_) {
    return FailedPrecondition("the buffer is being donated or overwritten");
  }
  if (host_write_.valid()) {
    return FailedPrecondition(
        "a writable host view of this array is live (" + HolderList() +
        "); release it before taking another view");
  }
  holders_.push_back(holder);
  return OkStatus();
}

void TrackedBuffer::DropExternalReference(const std::string& holder) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(holders_.begin(), holders_.end(), holder);
  if (it != holders_.end()) holders_.erase(it);
}

int TrackedBuffer::external_references() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(holders_.size());
}

std::string TrackedBuffer::HolderList() const {
  std::string s;
  for (size_t i = 0; i < holders_.size(); ++i) {
    if (i) s += ", ";
    s += holders_[i];
  }
  return s;
}

Result<std::vector<Event>> TrackedBuffer::BeginHostWrite(
    const std::string& holder) {
  std::unique_lock<std::mutex> lock(mu_);
  if (exclusive_) {
    return FailedPrecondition("the buffer is being donated or overwritten");
  }
  if (!holders_.empty()) {
    return FailedPrecondition(
        "a writable view needs exclusive access, but the array has live "
        "views: " + HolderList() + ". Release them first");
  }
  // Enqueues in progress must have recorded their usage before we collect it.
  cv_.wait(lock, [&] { return enqueues_in_progress_ == 0; });
  holders_.push_back(holder);
  host_write_ = Event::CreateHostWrite(holder);  // held by this thread
  std::vector<Event> wait = usage_;
  wait.push_back(definition_);
  return wait;
}

void TrackedBuffer::EndHostWrite(const std::string& holder) {
  Event done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find(holders_.begin(), holders_.end(), holder);
    if (it != holders_.end()) holders_.erase(it);
    done = host_write_;
    // Dropped: readers that waited on it hold usage events of their own,
    // which a free still orders after.
    host_write_ = Event();
  }
  if (done.valid()) done.SetReady();
}

Result<std::vector<Event>> TrackedBuffer::AcquireExclusive() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!holders_.empty()) {
    return DonationRefused("it has live host references: " + HolderList() +
                           ". Delete those views (or let them go out of "
                           "scope) first");
  }
  if (exclusive_) {
    return DonationRefused("it is already being donated or overwritten");
  }
  exclusive_ = true;
  cv_.wait(lock, [&] { return enqueues_in_progress_ == 0; });
  std::vector<Event> wait = usage_;
  wait.push_back(definition_);
  return wait;
}

void TrackedBuffer::ResetForNewOwner(Event definition) {
  std::lock_guard<std::mutex> lock(mu_);
  definition_ = std::move(definition);
  usage_.clear();
  exclusive_ = false;
}

}  // namespace baton

namespace baton {

void TrackedBuffer::ReleaseExclusive() {
  std::lock_guard<std::mutex> lock(mu_);
  exclusive_ = false;
}

}  // namespace baton
