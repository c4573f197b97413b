/*
 * LTTng-UST tracepoint provider of the LTTng comparison (bench/lttng/):
 * one event carrying the same payload as posix_trace_event(id, data, len),
 * a byte sequence with a 16-bit length. Built by run-lttng.sh, not by CMake.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stddef.h>
#include <stdint.h>
#include <lttng/tracepoint.h>

#include "net_rx.h"

LTTNG_UST_TRACEPOINT_EVENT(
    bench, event,
    LTTNG_UST_TP_ARGS(const void *, data, size_t, len),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_sequence_hex(uint8_t, data, (const uint8_t *)data, uint16_t, len)))

/*
 * The same 16 bytes as three integer fields (sequence number, small value,
 * pointer): how an LTTng user would describe this payload. Only used for
 * the reading comparison, where babeltrace2 pays per field (a byte
 * sequence is 16 fields to it).
 */
LTTNG_UST_TRACEPOINT_EVENT(
    bench, fields,
    LTTNG_UST_TP_ARGS(const void *, data),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, seq, ((const uint32_t *)data)[0])
        lttng_ust_field_integer(uint32_t, value, ((const uint32_t *)data)[1])
        lttng_ust_field_integer_hex(uint64_t, ptr, ((const uint64_t *)data)[1])))

/*
 * The typed event (net_rx.h): the fields as an LTTng user declares them,
 * for the typed reading comparison (ptlog dump with fields against
 * babeltrace2's text output).
 */
LTTNG_UST_TRACEPOINT_ENUM(
    bench, net_state,
    LTTNG_UST_TP_ENUM_VALUES(
        lttng_ust_field_enum_value("IDLE", 0)
        lttng_ust_field_enum_value("BUSY", 1)))

LTTNG_UST_TRACEPOINT_EVENT(
    bench, net_rx,
    LTTNG_UST_TP_ARGS(const bench_net_rx *, rx),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, len, rx->len)
        lttng_ust_field_integer(uint16_t, port, rx->port)
        lttng_ust_field_array_text(char, iface, rx->iface, 16)
        lttng_ust_field_float(double, latency, rx->latency)
        lttng_ust_field_enum(bench, net_state, uint8_t, state, rx->state)))

/* Never enabled by the benchmark: the cost of a tracepoint no session enabled. */
LTTNG_UST_TRACEPOINT_EVENT(
    bench, disabled,
    LTTNG_UST_TP_ARGS(const void *, data, size_t, len),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_sequence_hex(uint8_t, data, (const uint8_t *)data, uint16_t, len)))

#endif

#include <lttng/tracepoint-event.h>
