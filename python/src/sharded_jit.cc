// Bindings of jit/spmd_executable.h: a traced program partitioned over a
// mesh of this process's devices and compiled for each of them, for
// python/baton/_partitioned_call.py (jit of sharded arguments) and
// _shard_map_compile.py. `run` takes and returns the ShardedArrays bound in
// sharded_array.cc; `execute` per-device blocks (and donations). Shardings
// travel as PartitionSpecs resolved to mesh axis indices: per parameter,
// per dimension, the axes splitting it (major first).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/jit/donation.h"
#include "baton/compiler/shard_map_body.h"
#include "baton/jit/spmd_executable.h"
#include "conversions.h"
#include "module.h"
#include "not_constructible.h"
#include "program_handle.h"

namespace baton::python {
namespace {

using Dims = std::vector<std::vector<int>>;

// Where the mesh's devices are when `group` (a bt.distributed process
// group) is given; empty otherwise.
// `exchange`: a BlockExchange (bt.distributed's NCCL one) or None.
SpmdProcesses ProcessesOf(std::vector<int> process_of, int process_index,
                          nb::handle group, nb::handle exchange) {
  SpmdProcesses processes;
  if (!group.is_none()) {
    processes.process_index = process_index;
    processes.process_of = std::move(process_of);
    processes.group = nb::cast<collectives::ProcessGroup*>(group);
    if (!exchange.is_none()) {
      processes.exchange = nb::cast<BlockExchange*>(exchange);
    }
  }
  return processes;
}

std::shared_ptr<SpmdExecutable> CompileSpmd(
    nb::handle program, std::vector<std::string> axis_names,
    std::vector<int64_t> axis_sizes, std::vector<Dims> shardings,
    std::vector<nb::handle> devices, std::string name,
    std::vector<int> process_of, int process_index, nb::handle group,
    std::vector<std::optional<Dims>> out_shardings, std::vector<bool> donated,
    nb::handle exchange) {
  std::vector<compiler::Sharding> params;
  for (Dims& d : shardings) params.push_back(compiler::Sharding{std::move(d)});
  std::vector<Device*> devs = MeshDevices(devices);
  compiler::DeviceMesh mesh{std::move(axis_names), std::move(axis_sizes)};
  std::shared_ptr<const compiler::Program> p = ProgramOf(program);
  std::vector<std::optional<compiler::Sharding>> outputs;
  for (auto& o : out_shardings) {
    if (o.has_value()) {
      outputs.push_back(compiler::Sharding{std::move(*o)});
    } else {
      outputs.push_back(std::nullopt);
    }
  }
  const bool spans = !group.is_none();
  const SpmdProcesses processes =
      ProcessesOf(std::move(process_of), process_index, group, exchange);
  Result<std::shared_ptr<SpmdExecutable>> exe = [&] {
    nb::gil_scoped_release release;  // compiles a program per device
    return SpmdExecutable::Compile(*p, std::move(mesh), params, std::move(devs),
                                   std::move(name),
                                   spans ? &processes : nullptr, outputs,
                                   donated);
  }();
  return ValueOrThrow(std::move(exe));
}

// (result parameter, operand output, mesh axes, kind, dimension, concat
// dimension, tiled, sources): kind "sum" | "max" | "min" for an all-reduce,
// else "all_gather" | "psum_scatter" | "all_to_all" | "ppermute"
// (compiler::SpmdCollective; sources per group index for "ppermute").
using Collective = std::tuple<int, int, std::vector<int>, std::string, int, int,
                              bool, std::vector<int>>;

std::shared_ptr<SpmdExecutable> CompileShardMap(
    nb::handle program, std::vector<std::string> axis_names,
    std::vector<int64_t> axis_sizes, std::vector<Collective> collectives,
    std::vector<nb::handle> devices, std::string name,
    std::vector<int> process_of, int process_index, nb::handle group,
    nb::handle exchange) {
  using compiler::SpmdCollective;
  std::vector<compiler::ShardMapCollective> cs;
  for (auto& [param, operand, axes, kind, dim, concat, tiled, sources] :
       collectives) {
    compiler::ShardMapCollective c{param, operand, std::move(axes)};
    if (kind == "sum" || kind == "max" || kind == "min") {
      c.op = kind == "sum"   ? baton::ReduceOp::kSum
             : kind == "max" ? baton::ReduceOp::kMax
                             : baton::ReduceOp::kMin;
    } else {
      SpmdCollective m;
      if (kind == "all_gather") {
        m.kind = SpmdCollective::Kind::kAllGather;
      } else if (kind == "psum_scatter") {
        m.kind = SpmdCollective::Kind::kReduceScatter;
      } else if (kind == "all_to_all") {
        m.kind = SpmdCollective::Kind::kAllToAll;
      } else if (kind == "ppermute") {
        m.kind = SpmdCollective::Kind::kPermute;
      } else {
        throw nb::value_error(("compile_shard_map: unknown collective " + kind).c_str());
      }
      m.dimension = dim;
      m.concat_dimension = concat;
      m.tiled = tiled;
      m.source_of = std::move(sources);
      c.moves = std::move(m);
    }
    cs.push_back(std::move(c));
  }
  std::vector<Device*> devs = MeshDevices(devices);
  compiler::DeviceMesh mesh{std::move(axis_names), std::move(axis_sizes)};
  std::shared_ptr<const compiler::Program> p = ProgramOf(program);
  const bool spans = !group.is_none();
  const SpmdProcesses processes =
      ProcessesOf(std::move(process_of), process_index, group, exchange);
  Result<std::shared_ptr<SpmdExecutable>> exe = [&]()
      -> Result<std::shared_ptr<SpmdExecutable>> {
    nb::gil_scoped_release release;  // compiles a program per device
    BATON_ASSIGN_OR_RETURN(compiler::SpmdProgram spmd,
                           compiler::PartitionShardMapBody(*p, mesh, cs));
    return SpmdExecutable::CompilePartitioned(std::move(spmd), std::move(devs),
                                              std::move(name),
                                              spans ? &processes : nullptr);
  }();
  return ValueOrThrow(std::move(exe));
}

}  // namespace
}  // namespace baton::python

void init_sharded_jit(nb::module_& m) {
  using baton::SpmdExecutable;
  using baton::python::Dims;
  nb::class_<SpmdExecutable>(
      m, "SpmdExecutable",
      nb::type_slots(baton::python::kNotConstructibleSlots),
      "A program partitioned over a mesh of this process's devices and "
      "compiled for each (jit/spmd_executable.h).")
      .def(
          "execute",
          [](const SpmdExecutable& exe,
             std::vector<std::vector<baton::Array>> args,
             const std::vector<std::vector<nb::handle>>& donated) {
            // A donated argument's blocks are its markers' (consumed) arrays.
            std::vector<std::vector<baton::Donated*>> markers(donated.size());
            for (size_t i = 0; i < donated.size() && i < args.size(); ++i) {
              if (donated[i].empty()) continue;
              args[i].clear();
              for (nb::handle h : donated[i]) {
                markers[i].push_back(&nb::cast<baton::Donated&>(h));
                args[i].push_back(markers[i].back()->array);
              }
            }
            baton::Result<std::vector<std::vector<baton::Array>>> out = [&] {
              nb::gil_scoped_release release;  // stages may run inline
              return exe.Execute(args, markers);
            }();
            return baton::ValueOrThrow(std::move(out));
          },
          nb::arg("args"),
          nb::arg("donated") = std::vector<std::vector<nb::handle>>{},
          "args[i][d]: parameter i's block on devices[d]; for a parameter "
          "compiled donated, donated[i][d] is that block's bt.donate marker "
          "(spent by the call) and args[i] may be empty; else donated[i] is "
          "empty. Returns, per output, its block on each device.")
      .def(
          "run",
          [](const SpmdExecutable& exe,
             const std::vector<baton::ShardedArray>& args) {
            baton::Result<std::vector<baton::ShardedArray>> out = [&] {
              nb::gil_scoped_release release;  // stages may run inline
              return exe.Run(args);
            }();
            return baton::ValueOrThrow(std::move(out));
          },
          nb::arg("args"),
          "Runs the program on sharded arrays (_baton.ShardedArray), one per "
          "parameter, each on this executable's mesh and devices and laid "
          "out as its parameter was compiled for (none donated: that is "
          "execute's). Returns, per output, a ShardedArray laid out as "
          "output_shardings says.")
      .def_prop_ro("output_shardings",
                   [](const SpmdExecutable& exe) {
                     std::vector<Dims> out;
                     for (const auto& s : exe.output_shardings()) {
                       out.push_back(s.dims);
                     }
                     return out;
                   })
      .def_prop_ro("parameter_bytes_per_device",
                   &SpmdExecutable::parameter_bytes_per_device)
      .def_prop_ro("local_positions", &SpmdExecutable::local_positions)
      .def(
          "memory_analysis",
          [](const SpmdExecutable& exe, int k) {
            return baton::ValueOrThrow(exe.memory_analysis(k));
          },
          nb::arg("k") = 0,
          "What one call holds on this process's k-th device of the mesh: "
          "a MemoryAnalysis of its blocks (jit/spmd_executable.h).")
      .def_prop_ro("unusable_donations", &SpmdExecutable::unusable_donations,
                   "The donated parameters no output can reuse (freed after "
                   "the call instead).")
      .def_prop_ro("num_communication_stages",
                   [](const SpmdExecutable& exe) {
                     return exe.partitioned().num_communication_stages();
                   })
      .def_prop_ro("agreement", &SpmdExecutable::agreement,
                   "Across processes: what each stage exchanging blocks with "
                   "other processes exchanges, one line each; every call "
                   "checks that all processes' agree.")
      .def("as_text", &SpmdExecutable::as_text);
  m.def("compile_shard_map", &baton::python::CompileShardMap, nb::arg("program"),
        nb::arg("axis_names"), nb::arg("axis_sizes"), nb::arg("collectives"),
        nb::arg("devices"), nb::arg("name"),
        nb::arg("process_of") = std::vector<int>{}, nb::arg("process_index") = 0,
        nb::arg("group") = nb::none(), nb::arg("exchange") = nb::none(),
        // The executable calls the group's and the exchange's collectives:
        // keep them alive.
        nb::keep_alive<0, 9>(), nb::keep_alive<0, 10>(),
        "Compiles a shard_map body traced on one device's blocks "
        "(compiler::PartitionShardMapBody) for every device of the mesh "
        "(`devices` in row-major mesh order, None for another process's; "
        "then `process_of` and `group` as for compile_spmd): "
        "`collectives` are (result parameter, operand output, mesh axes, "
        "kind, dimension, concat dimension, tiled, sources) per collective; "
        "the executable's parameters "
        "are the program's others, its outputs the program's outputs that "
        "are not collective operands.");
  m.def("compile_spmd", &baton::python::CompileSpmd, nb::arg("program"),
        nb::arg("axis_names"), nb::arg("axis_sizes"), nb::arg("shardings"),
        nb::arg("devices"), nb::arg("name"),
        nb::arg("process_of") = std::vector<int>{}, nb::arg("process_index") = 0,
        nb::arg("group") = nb::none(),
        nb::arg("out_shardings") = std::vector<std::optional<Dims>>{},
        nb::arg("donated") = std::vector<bool>{},
        nb::arg("exchange") = nb::none(),
        // The executable calls the group's and the exchange's collectives:
        // keep them alive.
        nb::keep_alive<0, 9>(), nb::keep_alive<0, 12>(),
        "Partitions a traced program over a mesh (axis names and sizes; "
        "`devices` in row-major mesh order, None for another process's) for "
        "parameters laid out as `shardings`, and compiles it for this "
        "process's devices; across processes, `process_of` gives each mesh "
        "position's process and `group` the bt.distributed process group "
        "(`exchange`: its NCCL exchange between GPUs, or None); "
        "`out_shardings` per output the layout wanted, or None; `donated` "
        "per parameter whether calls donate it (its blocks are reused by "
        "the stage reading it last).");
}
