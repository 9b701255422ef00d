// baton._baton._profiler: what bt.profiler reads from the runtime (DESIGN
// 5.5) -- recordings of events, the memory history, live allocations and the
// allocators' segments -- and the Python stacks allocations keep.
#include <Python.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "allocation_stacks.h"
#include "baton/runtime/client.h"
#include "baton/runtime/trace_recorder.h"
#include "module.h"
#include "platforms.h"

namespace baton::python {
namespace {

// A recorded stack, else the interned one (symbolized now), else the API.
nb::list Frames(std::shared_ptr<const CallStack> stack, StackId stack_id,
                const char* api) {
  nb::list frames;
  if (!stack) stack = AllocationStackTable::Global().Symbolize(stack_id);
  if (stack) {
    for (const StackFrame& f : *stack) {
      frames.append(nb::make_tuple(f.function, f.file, f.line));
    }
  } else if (api != nullptr && api[0] != '\0') {
    frames.append(nb::make_tuple(std::string(api), "<baton>", 0));
  }
  return frames;
}

nb::dict EventDict(const TraceRecord& r) {
  nb::dict d;
  d["type"] = trace_record_kind_name(r.kind);
  d["begin_ns"] = r.begin_ns;
  d["end_ns"] = r.end_ns;
  d["device"] = r.device_id;
  d["queue"] = trace_track_name(r.track);
  d["memory_kind"] = std::string(memory_kind_name(r.memory_kind));
  d["bytes"] = r.bytes;
  d["address"] = r.address;
  d["id"] = r.allocation_id;
  d["kind"] = IsMemoryEvent(r.kind) ? allocation_kind_name(r.allocation_kind)
                                    : "";
  d["label"] = r.label;
  d["bytes_in_use"] = r.bytes_in_use;
  d["frames"] = IsMemoryEvent(r.kind) ? Frames(r.stack, 0, r.api) : nb::list();
  return d;
}

nb::list EventList(const std::vector<TraceRecord>& records) {
  nb::list out;
  for (const TraceRecord& r : records) out.append(EventDict(r));
  return out;
}

nb::dict AllocationDict(const LiveAllocation& a, int device_id,
                        MemoryKind kind) {
  nb::dict d;
  d["type"] = "alloc";
  d["begin_ns"] = a.time_ns;
  d["end_ns"] = a.time_ns;
  d["device"] = device_id;
  d["queue"] = "host";
  d["memory_kind"] = std::string(memory_kind_name(kind));
  d["bytes"] = a.bytes;
  d["address"] = a.address;
  d["id"] = a.id;
  d["kind"] = allocation_kind_name(a.kind);
  d["label"] = a.label;
  d["bytes_in_use"] = int64_t{-1};
  d["frames"] = Frames(a.stack, a.stack_id, a.api);
  return d;
}

const char* BlockStateName(SegmentInfo::Block::State s) {
  switch (s) {
    case SegmentInfo::Block::State::kFree:
      return "free";
    case SegmentInfo::Block::State::kLive:
      return "live";
    case SegmentInfo::Block::State::kPending:
      return "pending";
  }
  return "free";
}

template <typename F>
void ForEachSpace(F&& fn) {
  for (Device* device : AllDevices()) {
    for (int k = 0; k < kNumMemoryKinds; ++k) {
      const MemoryKind kind = static_cast<MemoryKind>(k);
      fn(device, kind, device->memory_space(kind));
    }
  }
}

}  // namespace

}  // namespace baton::python

void init_profiler(nb::module_& m) {
  using baton::TraceRecorder;
  nb::module_ p = m.def_submodule(
      "_profiler", "The runtime's recordings for baton.profiler (DESIGN 5.5)");
  p.def(
      "start_recording",
      [](const std::string& what) -> uint64_t {
        if (what != "trace" && what != "memory") {
          throw nb::value_error(
              "start_recording: `what` must be 'trace' (every event) or "
              "'memory' (allocations, frees, donations, overwrites)");
        }
        return TraceRecorder::Global().Start(
            what == "trace" ? TraceRecorder::Filter::kAll
                            : TraceRecorder::Filter::kMemory);
      },
      nb::arg("what"),
      "Starts a recording; returns its token for stop_recording.");
  p.def(
      "stop_recording",
      [](uint64_t token) {
        std::vector<baton::TraceRecord> records;
        {
          nb::gil_scoped_release release;
          records = TraceRecorder::Global().Stop(token);
        }
        return baton::python::EventList(records);
      },
      nb::arg("token"),
      "Ends a recording; returns its events (dicts), in the order recorded.");
  p.def(
      "set_history",
      [](bool enabled, int64_t max_entries) {
        if (max_entries < 0) {
          throw nb::value_error("record_memory_history: max_entries must be >= 0");
        }
        TraceRecorder::Global().SetHistory(enabled,
                                           static_cast<size_t>(max_entries));
      },
      nb::arg("enabled"), nb::arg("max_entries"),
      "Starts or stops keeping the last max_entries memory events.");
  p.def(
      "history",
      [] {
        std::vector<baton::TraceRecord> records;
        {
          nb::gil_scoped_release release;
          records = TraceRecorder::Global().History();
        }
        return baton::python::EventList(records);
      },
      "The memory history's events, oldest first.");
  p.def(
      "live_allocations",
      [] {
        nb::list out;
        baton::python::ForEachSpace(
            [&](baton::Device* d, baton::MemoryKind k, baton::MemorySpace& s) {
              for (const baton::LiveAllocation& a : s.LiveAllocations()) {
                out.append(baton::python::AllocationDict(a, d->id(), k));
              }
            });
        return out;
      },
      "Every live allocation of every device and memory kind.");
  p.def(
      "segments",
      [] {
        nb::list out;
        baton::python::ForEachSpace([&](baton::Device* d, baton::MemoryKind k,
                                        baton::MemorySpace& s) {
          for (const baton::SegmentInfo& seg : s.Segments()) {
            nb::dict sd;
            sd["device"] = d->id();
            sd["memory_kind"] = std::string(baton::memory_kind_name(k));
            sd["address"] = seg.address;
            sd["size"] = seg.size;
            nb::list blocks;
            for (const auto& b : seg.blocks) {
              nb::dict bd;
              bd["offset"] = b.offset;
              bd["size"] = b.size;
              bd["state"] = baton::python::BlockStateName(b.state);
              bd["id"] = b.allocation_id;
              blocks.append(bd);
            }
            sd["blocks"] = blocks;
            out.append(sd);
          }
        });
        return out;
      },
      "The allocators' regions and their blocks, per device and memory kind.");
  p.def("now_ns", &TraceRecorder::NowNs,
        "The events' clock (steady, nanoseconds).");
  p.def(
      "_set_internal_prefix",
      [](const std::string& prefix) {
        baton::python::SetInternalPrefix(prefix);
      },
      nb::arg("prefix"),
      "Frames from files under this prefix are left out of stacks.");
  p.def("_set_capture_allocation_stacks",
        &baton::python::SetCaptureAllocationStacks, nb::arg("enabled"),
        "Captures every allocating call's Python stack (True) or only while "
        "a recording is active (bt.config's capture_allocation_stacks).");
  p.def(
      "_interned_stacks",
      [] {
        const auto& table = baton::python::AllocationStackTable::Global();
        return nb::make_tuple(table.stack_count(), table.frame_count());
      },
      "(stacks, frames) held by the interned stack table (for tests).");
  p.def(
      "_set_interned_frames_limit",
      [](int64_t max_frames) {
        baton::python::AllocationStackTable::Global().set_max_frames(
            max_frames < 0 ? baton::python::AllocationStackTable::kMaxFrames
                           : static_cast<size_t>(max_frames));
      },
      nb::arg("max_frames"),
      "Tests: fills the interned stack table at max_frames (-1: the usual "
      "limit).");
}
