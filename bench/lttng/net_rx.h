/*
 * The typed event of the LTTng comparison (issue 13): samples/typed.c's
 * net.rx fields with an enum, as one C struct that both sides record, and
 * the values of event i, so that the .ptl log and the CTF trace hold the
 * same events. tracelog records the struct with this schema (C's natural
 * layout, 40 bytes); LTTng records its fields (tp.h, bench:net_rx).
 */
#ifndef BENCH_NET_RX_H
#define BENCH_NET_RX_H

#include <stdint.h>
#include <string.h>

#define BENCH_NET_RX_SCHEMA "u32 len; u16 port; char[16] iface; f64 latency; enum8 state {IDLE=0, BUSY=1}"

typedef struct bench_net_rx {
    uint32_t len;
    uint16_t port;
    char iface[16];
    double latency; /* seconds */
    uint8_t state;  /* 0 IDLE, 1 BUSY */
} bench_net_rx;

/* Event i: lengths 64..1563, four ports, two interfaces, latencies of 1 to 997 us (most need 6 digits). */
static inline void bench_net_rx_make(uint64_t i, bench_net_rx *rx)
{
    static const uint16_t ports[4] = {443, 80, 8080, 53};
    memset(rx, 0, sizeof *rx);
    rx->len = (uint32_t)(64 + i % 1500);
    rx->port = ports[i % 4];
    memcpy(rx->iface, i % 3 ? "eth0" : "wlan0", i % 3 ? 4 : 5);
    rx->latency = (double)(1 + i * 7 % 997) / 1e6;
    rx->state = (uint8_t)(i % 5 == 0);
}

#endif
