// Bindings of jit/sharded_array.h: `_baton.ShardedArray`, the storage of
// Python's bt.ShardedArray (python/baton/_sharded_array.py), which keeps
// one as `_impl` and adds the API (NamedSharding, shards, host views).
//
// A mesh travels as its axis names and sizes, a layout as, per dimension,
// the mesh axis indices splitting it (major first), and the devices as one
// per mesh position in row-major order, None for another process's. The
// blocks are bt.Array objects: the caster (array_caster.h) gives back the
// caller's own objects while they live, so a Python shard's `data` and the
// matching entry of `blocks` are one array, and a block's storage goes when
// its last handle -- here or in Python -- does (R1).
//
// Ownership: a Python ShardedArray owns a copy of the C++ value (handles,
// not storage). Thread-safety: as ShardedArray's; copy_to_host releases the
// GIL while it waits for the blocks.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/jit/sharded_array.h"
#include "conversions.h"
#include "module.h"
#include "not_constructible.h"

namespace baton::python {
namespace {

using Dims = std::vector<std::vector<int>>;

nb::tuple TupleOf(const Shape& shape) {
  nb::list l;
  for (int64_t d : shape.dims()) l.append(d);
  return nb::tuple(l);
}

ShardedArray FromBlocks(const std::vector<int64_t>& shape,
                        const std::string& dtype,
                        std::vector<std::string> axis_names,
                        std::vector<int64_t> axis_sizes, Dims dims,
                        const std::vector<nb::handle>& devices,
                        std::vector<Array> blocks) {
  return ValueOrThrow(ShardedArray::FromBlocks(
      Shape(shape), DTypeFromName(dtype),
      compiler::DeviceMesh{std::move(axis_names), std::move(axis_sizes)},
      compiler::Sharding{std::move(dims)}, MeshDevices(devices),
      std::move(blocks)));
}

nb::object CopyToHostNumpy(const ShardedArray& a) {
  void* data = nullptr;
  nb::object out = NumpyEmpty(a.shape(), a.dtype(), &data);
  const size_t bytes =
      static_cast<size_t>(a.shape().num_elements()) * dtype_size(a.dtype());
  Status s;
  {
    nb::gil_scoped_release release;  // waits for the work producing blocks
    s = a.CopyToHost(data, bytes);
  }
  ThrowIfError(s);
  return out;
}

}  // namespace
}  // namespace baton::python

void init_sharded_array(nb::module_& m) {
  using baton::ShardedArray;
  using namespace baton::python;
  nb::class_<ShardedArray>(
      m, "ShardedArray", nb::type_slots(kNotConstructibleSlots),
      "A global array laid out over a mesh of devices: one block per mesh "
      "position of this process (jit/sharded_array.h). Made by from_blocks "
      "and SpmdExecutable.run; bt.ShardedArray keeps one as its storage.")
      .def_static("from_blocks", &FromBlocks, nb::arg("shape"),
                  nb::arg("dtype"), nb::arg("axis_names"),
                  nb::arg("axis_sizes"), nb::arg("dims"), nb::arg("devices"),
                  nb::arg("blocks"),
                  "The array of `shape` and `dtype` (a baton dtype name) on "
                  "the mesh of `axis_names` and `axis_sizes`, laid out as "
                  "`dims` (per dimension the mesh axis indices splitting it, "
                  "major first); `devices` one per mesh position in "
                  "row-major order (None: another process's), `blocks` this "
                  "process's bt.Arrays in mesh order (not copied). ValueError "
                  "for a layout the shape does not allow or a block of the "
                  "wrong shape, dtype or device.")
      .def_prop_ro(
          "shape", [](const ShardedArray& a) { return TupleOf(a.shape()); },
          "The global shape, as a tuple of ints.")
      .def_prop_ro(
          "dtype",
          [](const ShardedArray& a) { return nb::borrow(NumpyDType(a.dtype())); },
          "The element type, as a numpy dtype.")
      .def_prop_ro(
          "block_shape",
          [](const ShardedArray& a) { return TupleOf(a.block_shape()); },
          "The shape of every block.")
      .def_prop_ro("blocks", &ShardedArray::blocks,
                   "This process's blocks (bt.Array), in mesh order (a new "
                   "list each time; the arrays themselves are shared).")
      .def_prop_ro(
          "devices",
          [](const ShardedArray& a) {
            nb::list out;
            for (baton::Device* d : a.devices()) {
              out.append(d == nullptr
                             ? nb::none()
                             : nb::cast(d, nb::rv_policy::reference));
            }
            return out;
          },
          "Per mesh position (row-major) its Device, or None for another "
          "process's.")
      .def_prop_ro(
          "dims", [](const ShardedArray& a) { return a.sharding().dims; },
          "Per dimension the mesh axis indices splitting it, major first.")
      .def_prop_ro(
          "axis_names",
          [](const ShardedArray& a) { return a.mesh().axis_names; },
          "The mesh's axis names.")
      .def_prop_ro(
          "axis_sizes",
          [](const ShardedArray& a) { return a.mesh().axis_sizes; },
          "The mesh's axis sizes.")
      .def("copy_to_host", &CopyToHostNumpy,
           "The whole array as a new numpy array, assembled from the blocks "
           "after the work producing them. RuntimeError when some block is "
           "another process's.");
}
