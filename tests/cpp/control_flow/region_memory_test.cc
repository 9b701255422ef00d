// RegionStep (backend/region_step.h) over storage reached through a
// RegionMemory -- how the CUDA GPU executable runs while, scan and case
// over device memory the host cannot address: the same results as over
// host memory, with every copy between carries and every read of a while
// condition or a case index made through the RegionMemory. Here the
// storage is host memory and the regions are CPU executables, so it runs
// on every machine.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cpu/cpu_executable.h"
#include "baton/backend/region_step.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/step_plan.h"
#include "control_flow/control_flow_exec_util.h"

namespace baton::cf_exec {
namespace {

// memcpy, counted.
class CountingMemory : public RegionMemory {
 public:
  Status Copy(void* dst, const void* src, int64_t bytes) const override {
    ++copies;
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return OkStatus();
  }
  Status Read(void* dst, const void* src, int64_t bytes) const override {
    ++reads;
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return OkStatus();
  }
  mutable int copies = 0;
  mutable int reads = 0;
};

// Fails every copy and read: the step's Run must return the error.
class FailingMemory : public RegionMemory {
 public:
  Status Copy(void*, const void*, int64_t) const override {
    return Internal("copy refused");
  }
  Status Read(void*, const void*, int64_t) const override {
    return Internal("read refused");
  }
};

struct Aligned {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, Aligned>;
Buffer Allocate(int64_t bytes) {
  const size_t size = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 63) / 64 * 64);
  return Buffer(static_cast<char*>(std::aligned_alloc(64, size)));
}

// Runs the control-flow step of `program` (its only one) over storage of
// its own, a buffer per value, with `memory`; the step's results.
Result<std::vector<Literal>> RunStep(const Program& program,
                                     const std::vector<Literal>& args,
                                     const RegionMemory* memory) {
  const auto p = std::make_shared<const Program>(c::Optimize(program));
  const c::StepPlan plan = c::PlanSteps(*p);
  int index = -1;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (plan.steps[s].kind == c::Step::Kind::kRegion) index = static_cast<int>(s);
  }
  if (index < 0) return Internal("no control-flow step");
  RegionCompiler compile =
      [](std::shared_ptr<const Program> region, std::vector<bool> donated,
         std::string name, std::vector<bool> slice_outputs)
      -> Result<std::shared_ptr<const RegionExecutable>> {
    BATON_ASSIGN_OR_RETURN(
        auto exe, cpu::CpuExecutable::Compile(std::move(region),
                                              std::move(donated),
                                              Client::Default().devices()[0],
                                              std::move(name),
                                              std::move(slice_outputs)));
    return std::shared_ptr<const RegionExecutable>(std::move(exe));
  };
  BATON_ASSIGN_OR_RETURN(
      std::unique_ptr<RegionStep> step,
      RegionStep::Compile(*p, plan.steps[static_cast<size_t>(index)], compile,
                          "region_memory"));
  std::vector<Buffer> storage;
  std::vector<void*> value_data(static_cast<size_t>(p->num_values()), nullptr);
  for (ValueId v = 0; v < p->num_values(); ++v) {
    storage.push_back(Allocate(p->type(v).byte_size()));
    value_data[v] = storage.back().get();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const ValueId param = p->parameters()[i];
    std::memcpy(value_data[param], args[i].untyped_data(),
                static_cast<size_t>(args[i].byte_size()));
  }
  Buffer scratch = Allocate(step->scratch_bytes());
  BATON_RETURN_IF_ERROR(
      step->Run(value_data, scratch.get(), nullptr, memory));
  std::vector<Literal> results;
  for (ValueId v : plan.steps[static_cast<size_t>(index)].members) {
    results.push_back(
        Literal::FromBytes(p->type(v).shape, p->type(v).dtype, value_data[v]));
  }
  return results;
}

// cond(i, x, limit, w) = i < limit; body = (i + 1, x * 0.5 + w)
Program WhileProgram() {
  const ValueType x = T({300});
  auto cond = Region({I32(), x, I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], a[2])};
  });
  auto body = Region({I32(), x, I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + 1, a[1] * 0.5f + a[3]};
  });
  return Build({I32(), x, I32(), x}, [&](c::TraceContext& ctx, const auto& a) {
    return EmitGroup(ctx, c::cf_test::While(2, cond, body),
                     {a[0], a[1], a[2], a[3]});
  });
}

TEST(RegionMemoryTest, WhileReadsItsConditionThroughTheMemory) {
  const std::vector<Literal> args{Literal::Scalar<int32_t>(2),
                                  Data(Shape{300}, 1),
                                  Literal::Scalar<int32_t>(9),
                                  Data(Shape{300}, 2)};
  const std::vector<Literal> want =
      ValueOrThrow(RunStep(WhileProgram(), args, nullptr));
  CountingMemory memory;
  const std::vector<Literal> got =
      ValueOrThrow(RunStep(WhileProgram(), args, &memory));
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[0].Get<int32_t>(0), 9);
  EXPECT_EQ(memory.reads, 9 - 2 + 1);  // the condition, once per test
  // The initial carries start in the results' own buffers: copied.
  EXPECT_GE(memory.copies, 2);
  FailingMemory failing;
  auto failed = RunStep(WhileProgram(), args, &failing);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("refused"), std::string::npos);
}

TEST(RegionMemoryTest, ScanAndCaseMoveTheirBytesThroughTheMemory) {
  const ValueType row = T({50});
  auto scan_body = Region({row, row}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + a[1], a[0] * a[1]};
  });
  const Program scan =
      Build({row, T({4, 50})}, [&](c::TraceContext& ctx, const auto& a) {
        return EmitGroup(ctx, c::cf_test::Scan(1, 1, 4, scan_body),
                         {a[0], a[1]});
      });
  const std::vector<Literal> scan_args{Data(Shape{50}, 3),
                                       Data(Shape{4, 50}, 4)};
  CountingMemory scan_memory;
  EXPECT_EQ(ValueOrThrow(RunStep(scan, scan_args, &scan_memory)),
            ValueOrThrow(RunStep(scan, scan_args, nullptr)));
  EXPECT_EQ(scan_memory.reads, 0);  // a scan reads nothing back
  EXPECT_GE(scan_memory.copies, 1);  // the carry into its final buffer

  auto minus = Region({row}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] - 1.0f};
  });
  auto same = Region({row}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0]};  // a parameter returned: a copy
  });
  const Program cases =
      Build({I32(), row}, [&](c::TraceContext& ctx, const auto& a) {
        return EmitGroup(ctx, c::cf_test::Case({minus, same}), {a[0], a[1]});
      });
  for (int32_t branch : {0, 1, 5}) {  // 5: clamped to the last branch
    const std::vector<Literal> args{Literal::Scalar<int32_t>(branch),
                                    Data(Shape{50}, 5)};
    CountingMemory memory;
    EXPECT_EQ(ValueOrThrow(RunStep(cases, args, &memory)),
              ValueOrThrow(RunStep(cases, args, nullptr)))
        << "branch " << branch;
    EXPECT_EQ(memory.reads, 1);  // the index
    EXPECT_EQ(memory.copies, branch == 0 ? 0 : 1) << "branch " << branch;
  }
}

}  // namespace
}  // namespace baton::cf_exec
