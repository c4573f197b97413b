/*
 * typed: a program that records typed events (tracelog_eventid_open_typed),
 * so that its log shows named fields instead of hex: each event type is
 * registered once with the layout of the C struct it records, and the
 * program then calls posix_trace_event() as usual.
 *
 *   typed FILE.ptl
 *
 * Writes FILE.ptl (created or truncated): 24 events of four types, the same
 * payloads every run. Then try `ptlog dump FILE.ptl` and
 * `offline_analyzer FILE.ptl`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include <tracelog.h>

/* The payloads, and their schemas: the same fields in the same order. */
enum conn_state { CONN_IDLE = 0, CONN_OPEN = 1, CONN_CLOSED = 2 };
enum { RX_CHECKSUM_OK = 0x1, RX_FRAGMENT = 0x2, RX_LAST = 0x4 };

typedef struct net_rx {
    uint32_t len;
    uint16_t port;
    uint8_t flags; /* RX_* */
    char iface[16];
    double latency; /* seconds */
} net_rx;
#define NET_RX_SCHEMA \
    "u32 len; u16 port; flags8 flags {CHECKSUM_OK=0x1, FRAGMENT=0x2, LAST=0x4}; char[16] iface; f64 latency"

typedef struct conn_change {
    uint32_t conn;
    uint8_t from, to; /* enum conn_state */
} conn_change;
#define CONN_SCHEMA \
    "u32 conn; enum8 from {IDLE=0, OPEN=1, CLOSED=2}; enum8 to {IDLE=0, OPEN=1, CLOSED=2}"

typedef struct cpu_load {
    double load;
    int32_t cpu;
} cpu_load;
#define CPU_SCHEMA "f64 load; i32 cpu"

/* A log line: a level and the text, as long as it is (the trailing char[]). */
#define LOG_SCHEMA "u8 level; char[] text"

static int record_all(void)
{
    trace_event_id_t rx_id, conn_id, cpu_id, log_id;
    int e;
    if ((e = tracelog_eventid_open_typed("net.rx", NET_RX_SCHEMA, &rx_id)) ||
        (e = tracelog_eventid_open_typed("conn.state", CONN_SCHEMA, &conn_id)) ||
        (e = tracelog_eventid_open_typed("cpu.load", CPU_SCHEMA, &cpu_id)) ||
        (e = tracelog_eventid_open_typed("app.log", LOG_SCHEMA, &log_id)))
        return e;
    static const char *const ifaces[] = {"eth0", "eth1", "lo"};
    for (uint32_t i = 0; i < 6; i++) {
        conn_change c = {i, CONN_IDLE, CONN_OPEN};
        posix_trace_event(conn_id, &c, sizeof c);
        for (uint32_t k = 0; k < 2; k++) {
            net_rx rx;
            memset(&rx, 0, sizeof rx); /* the padding too: the log holds the bytes as given */
            rx.len = 64 + 700 * ((i + k) % 3);
            rx.port = (uint16_t)(i % 2 ? 443 : 8080);
            rx.flags = (uint8_t)(RX_CHECKSUM_OK | (k ? RX_LAST : RX_FRAGMENT));
            snprintf(rx.iface, sizeof rx.iface, "%s", ifaces[i % 3]);
            rx.latency = 0.000125 * (i + 1) + 0.00005 * k;
            posix_trace_event(rx_id, &rx, sizeof rx);
        }
        cpu_load l = {0.25 * (double)(i % 4), (int32_t)(i % 2)};
        posix_trace_event(cpu_id, &l, sizeof l);
    }
    char line[64];
    int n = snprintf(line, sizeof line, "%c6 connections served", 1);
    posix_trace_event(log_id, line, (size_t)n); /* no NUL needed: char[] takes the rest */
    conn_change closed = {0, CONN_OPEN, CONN_CLOSED};
    posix_trace_event(conn_id, &closed, sizeof closed);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: typed FILE.ptl\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "typed: %s: %s\n", argv[1], strerror(errno));
        return 3;
    }
    trace_attr_t attr;
    trace_id_t trid;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "typed sample");
    int e = posix_trace_create_withlog(0, &attr, fd, &trid);
    posix_trace_attr_destroy(&attr);
    if (!e)
        e = posix_trace_start(trid);
    if (!e)
        e = record_all();
    if (!e)
        e = posix_trace_stop(trid);
    int e2 = posix_trace_shutdown(trid);
    if (e || e2) {
        fprintf(stderr, "typed: %s: %s\n", argv[1], strerror(e ? e : e2));
        close(fd);
        return 3;
    }
    close(fd);
    return 0;
}
