//===- Error.h - Error reporting inside the runtime (C++ side) ------------===//
//
// Runtime code is C++ with exceptions; every C entry point converts an
// exception into a fluid_status plus a thread-local message, so no exception
// ever crosses the C ABI.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_ERROR_H
#define FLUID_RUNTIME_ERROR_H

#include "fluid/runtime/Tensor.h"

#include <stdexcept>
#include <string>

namespace fluid::rt {

/// An error carrying the status code the C ABI reports.
class Error : public std::runtime_error {
public:
  Error(fluid_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  fluid_status status() const { return status_; }

private:
  fluid_status status_;
};

/// Sets the thread's last error message (used by the C entry points).
void setLastError(const std::string &message);

/// Runs `body`, mapping any exception to a status and the last-error message.
template <typename Fn> fluid_status guard(const char *entryPoint, Fn &&body) {
  try {
    body();
    setLastError("");
    return FLUID_OK;
  } catch (const Error &e) {
    setLastError(std::string(entryPoint) + ": " + e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    setLastError(std::string(entryPoint) + ": out of host memory");
    return FLUID_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    setLastError(std::string(entryPoint) + ": " + e.what());
    return FLUID_ERROR_INVALID_ARGUMENT;
  }
}

[[noreturn]] inline void fail(const std::string &message) {
  throw Error(FLUID_ERROR_INVALID_ARGUMENT, message);
}

} // namespace fluid::rt

#endif // FLUID_RUNTIME_ERROR_H
