// bt.devices() and the Device class.
//
// Devices belong to process-wide Clients, one per platform (platforms.h:
// BATON_PLATFORMS chooses which and in what order; the CPU client has
// BATON_NUM_CPU_DEVICES devices), created at import and never destroyed, so
// Python refers to them without owning them. One Python object per device is
// created at import and kept by the module, so `bt.devices()[0] is
// x.device` holds.
#include <nanobind/stl/string.h>

#include "baton/runtime/client.h"
#include "conversions.h"
#include "module.h"
#include "not_constructible.h"
#include "platforms.h"

namespace {

std::string DeviceRepr(const baton::Device& d) {
  std::string platform = d.platform();
  if (!platform.empty()) platform[0] = static_cast<char>(toupper(platform[0]));
  return platform + "Device(id=" + std::to_string(d.id()) + ")";
}

}  // namespace

void init_devices(nb::module_& m) {
  using baton::Device;
  nb::class_<Device>(m, "Device", nb::type_slots(baton::python::kNotConstructibleSlots),
                     "One device of baton's backend (on the CPU backend, a "
                     "logical CPU device). Each has three separately counted "
                     "memory spaces: 'device', 'pinned_host' and "
                     "'unpinned_host'. Get them from bt.devices().")
      .def_prop_ro("id", &Device::id, "The device's index in bt.devices().")
      .def_prop_ro("platform", &Device::platform,
                   "'cpu' (or 'cuda' for a CUDA device).")
      .def_prop_ro(
          "memory_kinds",
          [](const Device&) {
            return nb::make_tuple("device", "pinned_host", "unpinned_host");
          },
          "The memory kinds this device has.")
      .def_prop_ro(
          "default_memory_kind", [](const Device&) { return "device"; },
          "The memory kind arrays get when none is asked for: 'device'.")
      .def(
          "_host_addressable",
          [](const Device& d, const std::string& kind) {
            return d.host_addressable(baton::python::MemoryKindFromName(kind));
          },
          "Whether the host can read and write this device's memory of "
          "`kind` directly (every kind on the CPU; the host kinds on "
          "accelerators).")
      .def("__repr__", &DeviceRepr)
      .def("__str__", &Device::ToString)
      .def("__eq__",
           [](const Device& a, nb::handle b) {
             Device* d = nullptr;
             return nb::try_cast<Device*>(b, d) && d == &a;
           })
      .def("__hash__",
           [](const Device& d) { return std::hash<const void*>()(&d); });

  baton::python::InitPlatforms();  // throws: the import fails, saying why
  nb::list objects;
  for (Device* d : baton::python::DefaultDevices()) {
    objects.append(nb::cast(d, nb::rv_policy::reference));
  }
  nb::tuple tuple(objects);
  m.attr("_device_objects") = tuple;
  static PyObject* device_objects = tuple.ptr();  // owned by the module
  nb::list all;
  for (Device* d : baton::python::AllDevices()) {
    all.append(nb::cast(d, nb::rv_policy::reference));
  }
  nb::tuple all_tuple(all);
  m.attr("_all_device_objects") = all_tuple;
  static PyObject* all_device_objects = all_tuple.ptr();  // owned by module
  nb::dict unavailable;
  for (const auto& p : baton::python::Platforms()) {
    if (!p.unavailable.empty()) unavailable[p.name.c_str()] = p.unavailable;
  }
  m.attr("_unavailable_platforms") = unavailable;

  m.def(
      "devices", []() { return nb::list(nb::handle(device_objects)); },
      "The devices of the default platform, as a list (device 0 first): the "
      "first platform in BATON_PLATFORMS (default \"cpu,cuda\") that has "
      "devices. The CPU backend has BATON_NUM_CPU_DEVICES devices (read at "
      "import; default 1).");
  m.def(
      "_set_thread_default_device",
      [](Device* device) {
        return baton::python::SetThreadDefaultDevice(device);
      },
      nb::arg("device").none(), nb::rv_policy::reference,
      "Sets where this thread's new arrays go when no device is named (None: "
      "the default platform's device 0) and returns the previous setting "
      "(internal: bt.default_device, bt.shard_map).");
  m.def(
      "_all_devices", []() { return nb::list(nb::handle(all_device_objects)); },
      "Every device of every platform in BATON_PLATFORMS, the default "
      "platform's first.");
}
