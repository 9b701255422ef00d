// Process-wide settings (bt.config.update(...)).
//
// Thread-safety: all functions are thread-safe; a change applies to calls
// that start after it.
#pragma once

#include <functional>
#include <string>

namespace baton {

// What a donation that no output can use does (DESIGN R4).
enum class DonationMode { kWarn, kError };

DonationMode donation_mode();
void set_donation_mode(DonationMode mode);

// Receives warnings (e.g. an unusable donation). The default prints to
// stderr; the Python layer routes them to warnings.warn(DonationWarning).
using WarningHandler = std::function<void(const std::string& message)>;
void set_warning_handler(WarningHandler handler);
void EmitWarning(const std::string& message);

}  // namespace baton
