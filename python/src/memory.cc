// Memory statistics, limits and the live-array registry (DESIGN R9).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "array_caster.h"
#include "conversions.h"
#include "module.h"

namespace {
using baton::python::MemoryKindFromName;
using baton::python::ResolveDevice;

// device == nullptr (None): device 0.
baton::Device* DeviceOrDefault(baton::Device* device) {
  return device ? device : ResolveDevice(nb::none());
}

baton::MemorySpace& Space(baton::Device* device, const std::string& kind) {
  return DeviceOrDefault(device)->memory_space(MemoryKindFromName(kind));
}
}  // namespace

void init_memory(nb::module_& m) {
  m.def(
      "memory_stats",
      [](baton::Device* device, const std::string& memory_kind) {
        const baton::MemoryStats s = Space(device, memory_kind).stats();
        nb::dict d;
        d["bytes_in_use"] = s.bytes_in_use;
        d["peak_bytes_in_use"] = s.peak_bytes_in_use;
        d["num_allocs"] = s.num_allocs;
        d["largest_alloc_size"] = s.largest_alloc_size;
        d["bytes_limit"] = s.bytes_limit;
        d["bytes_reserved"] = s.bytes_reserved;
        return d;
      },
      nb::arg("device").none() = nb::none(), nb::arg("memory_kind") = "device",
      "Statistics of one memory space as a dict of ints: bytes_in_use (live "
      "buffers, and freed ones whose in-flight work has not finished; each "
      "rounded up to 256 bytes; borrowed memory is not counted), "
      "peak_bytes_in_use, num_allocs (cumulative), largest_alloc_size, "
      "bytes_limit (the set limit, else the machine's memory) and "
      "bytes_reserved (held from the system, free or not). device=None "
      "means device 0.");

  m.def(
      "reset_peak_memory_stats",
      [](baton::Device* device, const std::string& memory_kind) {
        Space(device, memory_kind).ResetPeak();
      },
      nb::arg("device").none() = nb::none(), nb::arg("memory_kind") = "device",
      "Sets peak_bytes_in_use of one memory space to its bytes_in_use.");

  m.def(
      "set_memory_limit",
      [](std::optional<int64_t> nbytes, baton::Device* device,
         const std::string& memory_kind) {
        if (nbytes && *nbytes < 0) {
          throw nb::value_error(
              "set_memory_limit: nbytes must be >= 0 or None");
        }
        Space(device, memory_kind).SetLimit(nbytes);
      },
      nb::arg("nbytes").none(), nb::arg("device").none() = nb::none(),
      nb::arg("memory_kind") = "device",
      "Limits one memory space to `nbytes` (None: no limit). An allocation "
      "that would exceed it raises ResourceExhaustedError listing the largest "
      "live arrays, and allocates nothing. A limit below the bytes in use "
      "only makes further allocations fail.");

  m.def(
      "live_arrays",
      [](baton::Device* device) {
        return DeviceOrDefault(device)->LiveArrays();
      },
      nb::arg("device").none() = nb::none(),
      "The live (undeleted) arrays on a device, of every memory kind, oldest "
      "first. An array the program still holds is returned as the same "
      "Python object.");
}
