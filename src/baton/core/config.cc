#include "baton/core/config.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>

namespace baton {
namespace {

std::atomic<DonationMode> g_donation_mode{DonationMode::kWarn};
std::mutex g_warning_mu;
WarningHandler& Handler() {
  static WarningHandler* handler = new WarningHandler();
  return *handler;
}

}  // namespace

DonationMode donation_mode() { return g_donation_mode.load(); }
void set_donation_mode(DonationMode mode) { g_donation_mode.store(mode); }

void set_warning_handler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(g_warning_mu);
  Handler() = std::move(handler);
}

void EmitWarning(const std::string& message) {
  WarningHandler handler;
  {
    std::lock_guard<std::mutex> lock(g_warning_mu);
    handler = Handler();
  }
  if (handler) {
    handler(message);
  } else {
    std::fprintf(stderr, "baton warning: %s\n", message.c_str());
  }
}

}  // namespace baton
