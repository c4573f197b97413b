#!/usr/bin/env python3
"""bt2_count.py TRACE_DIR: the babeltrace2 Python (bt2) side of the analyzer
comparison: per event type, the count, first and last timestamp and payload
size range, as samples/offline_analyzer prints for a .ptl log."""
import sys

import bt2


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bt2_count.py TRACE_DIR")
    stats = {}
    total = 0
    discarded = 0
    for msg in bt2.TraceCollectionMessageIterator(sys.argv[1]):
        if type(msg) is bt2._EventMessageConst:
            ev = msg.event
            ts = msg.default_clock_snapshot.ns_from_origin
            payload = ev.payload_field
            size = len(payload["data"]) if "data" in payload else 16
            s = stats.get(ev.name)
            if s is None:
                stats[ev.name] = [1, ts, ts, size, size]
            else:
                s[0] += 1
                s[2] = ts
                if size < s[3]:
                    s[3] = size
                if size > s[4]:
                    s[4] = size
            total += 1
        elif type(msg) is bt2._DiscardedEventsMessageConst:
            discarded += msg.count or 0
    print("%-32s %10s %14s %14s %10s" % ("event", "count", "first (s)", "last (s)", "bytes"))
    for name, (count, first, last, lo, hi) in sorted(stats.items()):
        print("%-32s %10d %14.6f %14.6f %4d..%-5d" % (name, count, first / 1e9, last / 1e9, lo, hi))
    print("%d events, %d discarded" % (total, discarded))


main()
