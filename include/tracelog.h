/*
 * tracelog.h - the native tracelog API: write and read .ptl logs.
 * The POSIX tracing interface lives in <trace.h>; tracelog's extensions to
 * it (typed event names among them) in <tracelog/posix.h>, included here.
 */
#ifndef TRACELOG_H
#define TRACELOG_H

#include "tracelog/common.h"
#include "tracelog/log.h"
#include "tracelog/writer.h"
#include "tracelog/reader.h"
#include "tracelog/schema.h"
#include "tracelog/posix.h"

#endif
