// A HostCallback for tests: records what each call saw, in call order.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "baton/compiler/host_callback.h"
#include "baton/compiler/op_attrs.h"
#include "baton/compiler/literal.h"

namespace baton::compiler::test_util {

// What one callback saw: its tag and every operand's elements as doubles.
struct Seen {
  std::string tag;
  std::vector<std::vector<double>> operands;
};

// Guards every log (recorders of one log may run on several threads).
inline std::mutex& LogMutex() {
  static std::mutex mu;
  return mu;
}

// Appends each call to a shared log; fails with `error` when it is set.
class Recorder final : public HostCallback {
 public:
  Recorder(std::string tag, std::vector<Seen>* log, Status error = OkStatus())
      : tag_(std::move(tag)), log_(log), error_(std::move(error)) {}
  Status Call(std::span<const HostCallbackOperand> operands) const override {
    Seen s{tag_, {}};
    for (const HostCallbackOperand& op : operands) {
      const Literal l =
          Literal::FromBytes(op.type->shape, op.type->dtype, op.data);
      std::vector<double> values;
      for (int64_t i = 0; i < l.shape().num_elements(); ++i) {
        values.push_back(l.GetAsDouble(i));
      }
      s.operands.push_back(std::move(values));
    }
    std::lock_guard<std::mutex> lock(LogMutex());
    log_->push_back(std::move(s));
    return error_;
  }
  std::string name() const override { return "record " + tag_; }

 private:
  std::string tag_;
  std::vector<Seen>* log_;  // not owned; guarded by LogMutex()
  Status error_;
};

inline HostCallbackAttrs Callback(std::string tag, std::vector<Seen>* log,
                           Status error = OkStatus()) {
  return {std::make_shared<const Recorder>(std::move(tag), log,
                                           std::move(error))};
}

}  // namespace baton::compiler::test_util
