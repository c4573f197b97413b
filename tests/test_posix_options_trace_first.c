/*
 * Option macros, limits and constants with <trace.h>
 * included BEFORE <unistd.h> and <limits.h> (test_posix_options_unistd_first.c
 * checks the other order). Issue 3: "after including it, _POSIX_TRACE, _POSIX_TRACE_LOG,
 * _POSIX_TRACE_EVENT_FILTER and _POSIX_TRACE_INHERIT are 200809L whatever
 * order <unistd.h> was included in."
 */
/* A strictly POSIX program (no GNU or default extensions): what the standard's applications define. */
#define _POSIX_C_SOURCE 200809L

#include <trace.h>

#include <limits.h>
#include <unistd.h>

#include "posix_helpers.h"

/* The preprocessor sees the same values as the compiler (§1: "#if _POSIX_TRACE > 0" style gating). */
#if !defined(_POSIX_TRACE) || _POSIX_TRACE != 200809L
#error "_POSIX_TRACE is not 200809L after <trace.h> then <unistd.h>"
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
