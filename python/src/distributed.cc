// bt.distributed's process group (baton/collectives/process_group.h: Gloo
// or MPI) on numpy arrays, and the NCCL exchange of blocks between GPUs
// (baton/backend/cuda/nccl_block_exchange.h) that partitioned calls use. Python (python/baton/distributed.py) checks arguments, owns
// the one group of the process, and turns the RuntimeErrors raised here
// into bt.errors.DistributedError. Every network call releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <stdexcept>

#include "baton/backend/block_exchange.h"
#include "baton/backend/cuda/nccl_block_exchange.h"
#include "baton/backend/cuda/nccl_process_group.h"
#include "baton/collectives/process_group.h"
#include "conversions.h"
#include "module.h"

namespace nb = nanobind;

namespace baton::python {
namespace {

using baton::collectives::ProcessGroup;
using HostArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

void Check(const Status& s) {
  if (s.ok()) return;
  if (s.code() == ErrorCode::kInvalidArgument) throw nb::value_error(s.message().c_str());
  throw std::runtime_error(s.message());
}

size_t Bytes(const HostArray& a) { return a.size() * (a.dtype().bits / 8); }

collectives::ReduceOp ParseOp(const std::string& op) {
  if (op == "sum") return collectives::ReduceOp::kSum;
  if (op == "max") return collectives::ReduceOp::kMax;
  if (op == "min") return collectives::ReduceOp::kMin;
  throw nb::value_error(("op is '" + op + "'; use 'sum', 'max' or 'min'").c_str());
}

}  // namespace
}  // namespace baton::python

void init_distributed(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;
  using baton::collectives::ProcessGroup;
  nb::class_<ProcessGroup>(m, "_ProcessGroup")
      .def_static(
          "connect",
          [](const std::string& address, int num_processes, int process_id, double init_timeout_s,
             double op_timeout_s, const std::string& interface_host) {
            collectives::ProcessGroupOptions o;
            o.coordinator_address = address;
            o.num_processes = num_processes;
            o.process_id = process_id;
            o.interface_host = interface_host;
            o.init_timeout = std::chrono::milliseconds(static_cast<long long>(init_timeout_s * 1000));
            o.op_timeout = std::chrono::milliseconds(static_cast<long long>(op_timeout_s * 1000));
            Result<std::unique_ptr<ProcessGroup>> g = [&] {
              nb::gil_scoped_release release;
              return ProcessGroup::Connect(o);
            }();
            Check(g.status());
            return std::move(g).value();
          },
          nb::arg("address"), nb::arg("num_processes"), nb::arg("process_id"),
          nb::arg("init_timeout_s"), nb::arg("op_timeout_s"), nb::arg("interface_host"))
      .def_static("connect_mpi",
                  [] {
                    Result<std::unique_ptr<ProcessGroup>> g = [&] {
                      nb::gil_scoped_release release;
                      return ProcessGroup::ConnectMpi();
                    }();
                    Check(g.status());
                    return std::move(g).value();
                  })
      .def_static("available", &ProcessGroup::GlooAvailable)
      .def_static("mpi_available", &ProcessGroup::MpiAvailable)
      .def_prop_ro("backend", &ProcessGroup::backend)
      .def_prop_ro("rank", &ProcessGroup::rank)
      .def_prop_ro("size", &ProcessGroup::size)
      .def("allreduce_",
           [](ProcessGroup& g, HostArray a, const std::string& dtype, const std::string& op) {
             std::optional<DType> t = dtype_from_name(dtype);
             if (!t) throw nb::value_error(("unknown dtype '" + dtype + "'").c_str());
             collectives::ReduceOp rop = ParseOp(op);
             nb::gil_scoped_release release;
             Check(g.AllReduce(a.data(), a.size(), *t, rop));
           })
      .def("allgather",
           [](ProcessGroup& g, HostArray in, HostArray out) {
             if (Bytes(out) != Bytes(in) * static_cast<size_t>(g.size())) {
               throw nb::value_error("allgather: the output must hold process_count inputs");
             }
             nb::gil_scoped_release release;
             Check(g.AllGather(in.data(), out.data(), Bytes(in)));
           })
      .def("broadcast_",
           [](ProcessGroup& g, HostArray a, int root) {
             nb::gil_scoped_release release;
             Check(g.Broadcast(a.data(), Bytes(a), root));
           })
      .def("barrier", [](ProcessGroup& g) {
        nb::gil_scoped_release release;
        Check(g.Barrier());
      });
  nb::class_<BlockExchange>(m, "_BlockExchange")
      .def_prop_ro("name", &BlockExchange::name);
  nb::class_<cuda::NcclBlockExchange, BlockExchange>(m, "_NcclExchange")
      .def_static(
          "connect",
          [](ProcessGroup& group, nb::handle device) {
            Device* d = ResolveDevice(device);
            Result<std::unique_ptr<cuda::NcclBlockExchange>> e = [&] {
              nb::gil_scoped_release release;
              return cuda::NcclBlockExchange::Connect(group, d);
            }();
            Check(e.status());
            return std::move(e).value();
          },
          nb::arg("group"), nb::arg("device"),
          // The exchange broadcast its id through the group: keep it alive.
          nb::keep_alive<0, 1>(),
          "Joins NCCL with the processes of `group` on `device` (this "
          "process's one CUDA device); a collective.")
      .def_static(
          "unavailable_reason",
          [] { return cuda::NcclProcessGroup::UnavailableReason(); },
          "'' when NCCL loads, else why not (loads it on first call).");
}
