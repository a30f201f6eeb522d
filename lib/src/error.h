// The thread-local error message behind avgpool_last_error_message().
#pragma once

#include "avgpool/avgpool.h"

namespace avgpool {

// Records a printf-style message for the calling thread and returns status.
avgpool_status set_error(avgpool_status status, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// Clears the calling thread's message (every API entry point does this).
void clear_error();

}  // namespace avgpool
