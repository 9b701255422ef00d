#include "baton/backend/executable.h"

#include "baton/backend/cpu/cpu_executable.h"
#include "baton/backend/cuda/gpu_executable.h"
#include "baton/runtime/device.h"

namespace baton {

Result<std::shared_ptr<Executable>> CompileExecutable(
    std::shared_ptr<const compiler::Program> program, std::vector<bool> donated,
    Device* device, std::string name, std::vector<bool> fresh_outputs) {
  if (device->platform() == "cpu") {
    BATON_ASSIGN_OR_RETURN(
        auto exe,
        cpu::CpuExecutable::Compile(std::move(program), std::move(donated),
                                    device, std::move(name),
                                    std::move(fresh_outputs)));
    return std::shared_ptr<Executable>(std::move(exe));
  }
  if (device->platform() == "sim" || device->platform() == "cuda") {
    // The simulated device runs the GPU executable's kernels as host code.
    const auto target = device->platform() == "sim"
                            ? cuda::GpuExecutable::Target::kHostEmulation
                            : cuda::GpuExecutable::Target::kCuda;
    BATON_ASSIGN_OR_RETURN(
        auto exe, cuda::GpuExecutable::Compile(
                      std::move(program), std::move(donated), device,
                      std::move(name), std::move(fresh_outputs), target));
    return std::shared_ptr<Executable>(std::move(exe));
  }
  // The wording of test_accelerator_memory.py's "no executables" check.
  return Unimplemented(
      name + ": computations do not run on " + device->ToString() +
      " yet: baton's " + device->platform() +
      " backend has memory, transfers and host views, but no executables. "
      "Compute on a CPU device (bt.devices(\"cpu\")): move the arguments "
      "there with bt.device_put, and the results back.");
}

}  // namespace baton
