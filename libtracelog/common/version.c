/* The library's run-time version (its compile-time version is in tracelog/common.h). */
#include "tracelog/common.h"

unsigned tracelog_version_number(void) { return TRACELOG_VERSION_NUMBER; }
const char *tracelog_version_string(void) { return TRACELOG_VERSION_STRING; }
