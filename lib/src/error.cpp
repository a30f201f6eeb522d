#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

namespace avgpool {

namespace {
// One message per thread: a failed call in one thread never shows in another.
thread_local char t_message[512] = "";
}  // namespace

avgpool_status set_error(avgpool_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_message, sizeof t_message, format, args);
  va_end(args);
  return status;
}

void clear_error() { t_message[0] = '\0'; }

}  // namespace avgpool

extern "C" AVGPOOL_API const char* avgpool_last_error_message(void) { return avgpool::t_message; }

extern "C" AVGPOOL_API const char* avgpool_status_string(avgpool_status status) {
  // A C caller may pass any int: read it as one (loading a value outside
  // the enum as the C++ enum type is undefined behaviour).
  int value;
  static_assert(sizeof value == sizeof status, "enum layout");
  memcpy(&value, &status, sizeof value);
  switch (value) {
    case AVGPOOL_SUCCESS: return "success";
    case AVGPOOL_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case AVGPOOL_ERROR_UNSUPPORTED: return "unsupported";
    case AVGPOOL_ERROR_OUT_OF_MEMORY: return "out of memory";
    case AVGPOOL_ERROR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case AVGPOOL_ERROR_DEVICE: return "device error";
    case AVGPOOL_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}
