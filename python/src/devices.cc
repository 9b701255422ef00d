// bt.devices() and the Device class.
//
// Devices belong to the process-wide Client (Client::Default(), created at
// import with BATON_NUM_CPU_DEVICES devices) and are never destroyed, so
// Python refers to them without owning them. One Python object per device is
// created at import and kept by the module, so `bt.devices()[0] is
// x.device` holds.
#include <nanobind/stl/string.h>

#include "baton/runtime/client.h"
#include "conversions.h"
#include "module.h"
#include "not_constructible.h"

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
      .def("__repr__", &DeviceRepr)
      .def("__str__", &Device::ToString)
      .def("__eq__",
           [](const Device& a, nb::handle b) {
             Device* d = nullptr;
             return nb::try_cast<Device*>(b, d) && d == &a;
           })
      .def("__hash__",
           [](const Device& d) { return std::hash<const void*>()(&d); });

  nb::list objects;
  for (Device* d : baton::Client::Default().devices()) {
    objects.append(nb::cast(d, nb::rv_policy::reference));
  }
  nb::tuple tuple(objects);
  m.attr("_device_objects") = tuple;
  static PyObject* device_objects = tuple.ptr();  // owned by the module

  m.def(
      "devices", []() { return nb::list(nb::handle(device_objects)); },
      "The devices of baton's backend, as a list (device 0 first). The CPU "
      "backend has BATON_NUM_CPU_DEVICES devices (read at import; default "
      "1).");
}
