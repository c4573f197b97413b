/*
 * Option macros, limits and constants with <unistd.h> and <limits.h>
 * included BEFORE <trace.h> (test_posix_options_trace_first.c checks the
 * other order). Issue 3: "after including it, _POSIX_TRACE, _POSIX_TRACE_LOG,
 * _POSIX_TRACE_EVENT_FILTER and _POSIX_TRACE_INHERIT are 200809L whatever
 * order <unistd.h> was included in."
 */
/* An X/Open program (_XOPEN_SOURCE 700). */
#define _XOPEN_SOURCE 700

#include <limits.h>
#include <unistd.h>

#include <trace.h>

#include "posix_helpers.h"

/* The preprocessor sees the same values as the compiler (§1: "#if _POSIX_TRACE > 0" style gating). */
#if !defined(_POSIX_TRACE) || _POSIX_TRACE != 200809L
#error "_POSIX_TRACE is not 200809L after <unistd.h> then <trace.h>"
#endif
#if !defined(_POSIX_TRACE_EVENT_FILTER) || _POSIX_TRACE_EVENT_FILTER != 200809L
#error "_POSIX_TRACE_EVENT_FILTER is not 200809L"
#endif
#if !defined(_POSIX_TRACE_LOG) || _POSIX_TRACE_LOG != 200809L
#error "_POSIX_TRACE_LOG is not 200809L"
#endif
#if !defined(_POSIX_TRACE_INHERIT) || _POSIX_TRACE_INHERIT != 200809L
#error "_POSIX_TRACE_INHERIT is not 200809L"
#endif

static void test_macros(void)
{
    pt_check_options(_POSIX_TRACE, _POSIX_TRACE_EVENT_FILTER, _POSIX_TRACE_LOG, _POSIX_TRACE_INHERIT);
}

int main(void)
{
    pt_watchdog(18);
    PT_RUN(test_macros);
    PT_RUN(pt_test_options_runtime);
    return pt_finish();
}
