// The scenarios of the allocation-failure injection tests (issue 14): each
// does real work through baton's public C++ API -- transfers, overwrites,
// copies between memory kinds, jitted programs with constants, temporaries,
// donation and loops -- and returns its Status, having checked the values
// it produced. fault_injection_test.cc runs each one first counting its
// allocation sites (K), then once per site with that allocation failing.
//
// A scenario owns nothing between runs: setup() builds fresh inputs, run()
// drops everything it created before returning.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/compiler/buffer_assignment.h"
#include "baton/runtime/array.h"
#include "baton/runtime/device.h"

namespace baton::fault_testing {

// One input array and what it must look like after a run.
struct Input {
  Array array;
  std::vector<float> values;  // what it holds (float32)
  // How a successful run consumes it; kLive: it stays live and unchanged.
  // A failed run must consume nothing (DESIGN: nothing lost on an error).
  ConsumedReason::Kind consumed_on_success = ConsumedReason::Kind::kLive;
};

struct Inputs {
  std::vector<Input> arrays;
  std::shared_ptr<void> state;  // e.g. a Jitted compiled during setup
};

struct Scenario {
  using SetupFn = std::function<Inputs(const std::vector<Device*>& devices)>;
  using RunFn = std::function<Status(Inputs& inputs,
                                     const std::vector<Device*>& devices)>;
  Scenario(std::string name, SetupFn setup, RunFn run,
           std::vector<int64_t> optional_sites = {},
           std::string optional_why = "")
      : name(std::move(name)),
        setup(std::move(setup)),
        run(std::move(run)),
        optional_sites(std::move(optional_sites)),
        optional_why(std::move(optional_why)) {}

  std::string name;
  // Builds the inputs on `devices` (at least two); not counted.
  SetupFn setup;
  // The work under test. Must check its results (Internal on a wrong value)
  // and wait for its asynchronous work before returning.
  RunFn run;
  // Allocation sites (1-based, in counting order) whose failure the run
  // absorbs and still succeeds, and why that allocation is optional.
  std::vector<int64_t> optional_sites;
  std::string optional_why;
};

std::vector<Scenario> AllScenarios();

// The memory analysis of the jitted programs the scenarios compile, by
// name (to check they really have constants, temporaries and aliases).
std::vector<std::pair<std::string, compiler::MemoryAnalysis>>
AnalyzeScenarioPrograms(Device* device);

// Reads a float32 array back (no allocation).
Result<std::vector<float>> ReadFloats(const Array& a);
// Internal error naming `what` unless `a` holds exactly `want`.
Status ExpectValues(const Array& a, const std::vector<float>& want,
                    const std::string& what);

}  // namespace baton::fault_testing
