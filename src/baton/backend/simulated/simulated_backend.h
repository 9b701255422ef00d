// SimulatedBackend: a stand-in accelerator whose device memory the host
// cannot touch, so the runtime's platform independence is tested on any
// machine, without a GPU.
//
// Its `device` memory kind lives at addresses mapped PROT_NONE: any direct
// read or write by host code (a kernel, a memcpy, a numpy view) faults at
// once. The same pages are mapped a second time, readable and writable, at an
// address only this backend knows; Copy and Fill translate device addresses
// to that shadow mapping, exactly where a GPU backend would call
// cudaMemcpyAsync. pinned_host and unpinned_host are ordinary host memory,
// as on a GPU. It counts the bytes it moves, so tests can check that a
// transfer happened once and only once.
//
// Its device memory is finite, as a GPU's is: the regions of all its
// devices together are at most the machine's physical memory
// (device_capacity()); a region past that is refused, so an allocation too
// large for the device is a ResourceExhausted error at once, as on a GPU --
// never sparse pages that fill the host's memory as they are touched.
//
// It is asynchronous as a GPU is (DeviceBackend): each device has three
// streams that run copies and fills on threads of their own, and a
// completion thread that completes their events (SimulatedStreams); a
// dependency across streams is a wait on the device. In slow-device mode
// (Options::slow, or BATON_SIM_SLOW=<seed> for SimulatedClient()) every
// operation starts after a random delay, and device memory is poisoned
// (kPoisonByte) as it is freed, so work missing a dependency edge reads
// wrong values on a CPU machine instead of on the GPU.
//
// The platform is "sim"; Python gets its devices with BATON_PLATFORMS=sim
// (tests/python/test_platforms.py). Compiled programs run on it through the
// CUDA backend's executable (backend/cuda/gpu_executable.h), whose
// generated kernels it runs as host code on its compute stream
// (EmulateAsync): it tests memory, transfers, donation of storage, in-place
// overwrites, host views, the asynchronous device contract and the GPU
// executor, without a GPU.
//
// Ownership: shared by the Devices of its Client; owns the shadow mappings
// (one memfd-backed pair per region, unmapped in FreeRegion) and the
// streams' threads (joined, after draining, when the backend goes).
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "baton/backend/simulated/simulated_streams.h"
#include "baton/runtime/device_backend.h"

namespace baton {

class Client;

class SimulatedBackend final
    : public DeviceBackend,
      public std::enable_shared_from_this<SimulatedBackend> {
 public:
  using Options = SimulatedStreams::Options;
  // Freed device memory is filled with this byte in slow-device mode.
  static constexpr unsigned char kPoisonByte = 0xFB;

  explicit SimulatedBackend(Options options = {});
  ~SimulatedBackend() override;

  const std::string& platform() const override { return platform_; }
  std::unique_ptr<RegionProvider> MakeRegionProvider(int device_ordinal,
                                                     MemoryKind kind) override;
  bool host_addressable(MemoryKind kind) const override {
    return kind != MemoryKind::kDevice;
  }
  Event CopyAsync(int device_ordinal, QueueKind queue, void* dst,
                  const void* src, size_t bytes) override;
  Event FillAsync(int device_ordinal, QueueKind queue, void* dst,
                  int64_t count, size_t elem_bytes, uint64_t pattern) override;
  // Runs `work` on the stream with device addresses mapped to their shadow
  // (the simulated device's "kernel launch": the CUDA backend's generated
  // kernels compiled for the host, backend/cuda/gpu_executable.h).
  Event EmulateAsync(
      int device_ordinal, QueueKind queue,
      std::function<Status(const HostAddressOf&)> work) override;
  // Device-side wait for any event of this backend's work (any device).
  bool WaitOnStream(int device_ordinal, QueueKind queue,
                    const Event& event) override;

  // Stops every stream of every device from starting work until
  // ReleaseDevices(): what is enqueued meanwhile stays pending (tests of the
  // host running ahead). Devices created later start held too.
  void HoldDevices();
  void ReleaseDevices();
  const Options& options() const { return options_; }

  // Bytes Copy has written into device memory / read out of it (a copy
  // from device to device counts in both), since construction.
  int64_t bytes_to_device() const { return to_device_.load(); }
  int64_t bytes_from_device() const { return from_device_.load(); }
  // The most device memory its regions may hold, all devices together: the
  // machine's physical memory.
  int64_t device_capacity() const { return capacity_; }
  // Whether [ptr, ptr + bytes) lies in this backend's device memory.
  bool IsDeviceMemory(const void* ptr, size_t bytes) const;

  // Region bookkeeping for the device provider (simulated_backend.cc).
  void* MapRegion(size_t bytes);
  void UnmapRegion(void* device_base, size_t bytes);
  // Slow-device mode: fills freed device memory with kPoisonByte.
  void Poison(void* device_ptr, size_t bytes);

 private:
  struct Region {
    size_t bytes;
    char* shadow;  // the readable, writable view of the same pages
  };
  // The shadow address of device address `ptr`, or nullptr if `ptr` is not
  // device memory; an InvalidArgument if [ptr, ptr + bytes) runs past the
  // region it starts in.
  Result<char*> Shadow(const void* ptr, size_t bytes) const;
  // `ptr` itself for host memory, its shadow for device memory.
  Result<char*> Resolve(const void* ptr, size_t bytes, bool* on_device) const;

  // The streams of device `ordinal`, started on first use.
  SimulatedStreams& StreamsOf(int ordinal);

  const std::string platform_ = "sim";
  const Options options_;
  mutable std::mutex mu_;
  std::map<uintptr_t, Region> regions_;  // by device base; guarded by mu_
  int64_t mapped_bytes_ = 0;             // guarded by mu_
  const int64_t capacity_;
  // By device ordinal; guarded by mu_ (the objects themselves are
  // thread-safe and live as long as the backend).
  std::map<int, std::unique_ptr<SimulatedStreams>> streams_;
  bool held_ = false;  // guarded by mu_
  std::atomic<int64_t> to_device_{0};
  std::atomic<int64_t> from_device_{0};
};

// The process-wide client of BATON_NUM_SIM_DEVICES (default 1) simulated
// devices, created on first use and never destroyed, like Client::Default().
// BATON_SIM_SLOW=<seed> (a non-negative integer) puts it in slow-device
// mode with that seed.
Client& SimulatedClient();

}  // namespace baton
