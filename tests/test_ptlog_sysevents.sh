#!/bin/bash
# ptlog dump shows the payloads of the standard's system events decoded
# (tools/ptlog/fields.c) with the library's built-in schemas when the log
# stores none: START's and FILTER's event sets as event names (runs of
# unnamed ids as ranges), STOP's MANUAL or AUTOMATIC, ERROR's errno name
# (or number; the reading host's strerror text is no longer added); OVERFLOW, RESUME and FLUSH_* carry
# nothing. A payload whose size is not the recorded layout, or an id the log
# names otherwise, stays hex; --hex keeps every payload raw.
. "$(dirname "$0")/ptlog/lib.sh"

# A trace_event_set_t (17 64-bit words, little-endian) from the hex of its first bytes.
set_hex() { local h=$1; while [ ${#h} -lt 272 ]; do h=${h}0; done; echo "$h"; }
A=$(set_hex 0000000002370c10) # ids 33, 40-42, 44-45, 50-51, 60
EMPTY=$(set_hex "")
SYS=$(set_hex fe01)            # ids 1-8
cat >sys.jsonl <<J
{"attributes":{"trace_name":"sys"},"event_types":[{"id":1,"name":"posix_trace_error"},{"id":2,"name":"posix_trace_start"},{"id":3,"name":"posix_trace_stop"},{"id":4,"name":"posix_trace_overflow"},{"id":5,"name":"posix_trace_resume"},{"id":6,"name":"posix_trace_filter"},{"id":7,"name":"posix_trace_flush_start"},{"id":8,"name":"posix_trace_flush_stop"},{"id":32,"name":"posix_trace_unnamed_userevent"},{"id":33,"name":"io:x"},{"id":50,"name":"fifty"},{"id":60,"name":"has space"}]}
{"id":2,"ts":1000,"data":"$EMPTY"}
{"id":6,"ts":1001,"data":"$EMPTY$A"}
{"id":2,"ts":1002,"data":"$A"}
{"id":6,"ts":1003,"data":"$A$SYS"}
{"id":4,"ts":1004}
{"id":5,"ts":1005}
{"id":7,"ts":1006}
{"id":8,"ts":1007}
{"id":1,"ts":1008,"data":"1c000000"}
{"id":1,"ts":1009,"data":"92100000"}
{"id":3,"ts":1010,"data":"01000000"}
{"id":3,"ts":1011,"data":"00000000"}
{"id":3,"ts":1012,"data":"0000000000"}
{"id":2,"ts":1013,"data":"0000"}
{"id":4,"ts":1014,"data":"ff"}
{"id":33,"ts":1015,"data":"01000000"}
J
expect_rc 0 "dump of system events" "$PTLOG" dump --relative sys.jsonl
cat >want.txt <<'W'
0.000000000 0 0x0 posix_trace_start { event_filter = [] }
0.000000001 0 0x0 posix_trace_filter { old_event_filter = [], new_event_filter = [io:x, event#40..event#42, event#44, event#45, fifty, event#51, "has space"] }
0.000000002 0 0x0 posix_trace_start { event_filter = [io:x, event#40..event#42, event#44, event#45, fifty, event#51, "has space"] }
0.000000003 0 0x0 posix_trace_filter { old_event_filter = [io:x, event#40..event#42, event#44, event#45, fifty, event#51, "has space"], new_event_filter = [posix_trace_error, posix_trace_start, posix_trace_stop, posix_trace_overflow, posix_trace_resume, posix_trace_filter, posix_trace_flush_start, posix_trace_flush_stop] }
0.000000004 0 0x0 posix_trace_overflow
0.000000005 0 0x0 posix_trace_resume
0.000000006 0 0x0 posix_trace_flush_start
0.000000007 0 0x0 posix_trace_flush_stop
0.000000008 0 0x0 posix_trace_error { error = ENOSPC }
0.000000009 0 0x0 posix_trace_error { error = 4242 }
0.000000010 0 0x0 posix_trace_stop { auto = AUTOMATIC }
0.000000011 0 0x0 posix_trace_stop { auto = MANUAL }
0.000000012 0 0x0 posix_trace_stop 0000000000
0.000000013 0 0x0 posix_trace_start 0000
0.000000014 0 0x0 posix_trace_overflow ff
0.000000015 0 0x0 io:x 01000000
W
expect_same "decoded system events" want.txt "$T/out"

# --hex: every payload raw, as before decoding existed.
expect_rc 0 "dump --hex" "$PTLOG" dump --relative --hex sys.jsonl
sed -n 2p "$T/out" | grep -q "^0.000000001 0 0x0 posix_trace_filter $EMPTY$A\$" && ok || bad "--hex: $(sed -n 2p "$T/out" | head -c 200)"
grep -q '^0.000000010 0 0x0 posix_trace_stop 01000000$' "$T/out" && ok || bad "--hex: stop"
grep -c '{' "$T/out" | grep -qx 0 && ok || bad "--hex still decodes"

# An id named otherwise is not a system event: its payload stays hex.
printf '{"attributes":{},"event_types":[{"id":3,"name":"mystop"}]}\n{"id":3,"ts":1,"data":"01000000"}\n' >other.jsonl
expect_rc 0 "other names" "$PTLOG" dump --relative other.jsonl
printf '0.000000000 0 0x0 mystop 01000000\n' >want.txt
expect_same "an id named otherwise" want.txt "$T/out"

# Recorded logs: the golden ones (STOP of posix_trace_stop()) and, when the
# samples are built, a program's START with the filter in force.
"$PTLOG" dump "$SRC/samples/golden/append.ptl" | grep posix_trace_st >golden.txt
printf '%s\n' "2026-01-01T00:00:00.000000000Z 4242 0x7f1a2b3c4d40 posix_trace_start" \
    "2026-01-01T00:00:02.000000000Z 4242 0x7f1a2b3c4d40 posix_trace_stop { auto = MANUAL }" >want.txt
expect_same "golden log's system events" want.txt golden.txt
record=${TL_BUILD_DIR:-}/samples/record
if [ -x "$record" ]; then
    "$record" rec.ptl 10 >/dev/null 2>&1
    expect_rc 0 "dump a recorded log" "$PTLOG" dump rec.ptl
    grep -Eq '^[^ ]+ [0-9]+ 0x[0-9a-f]+( tid [0-9]+)? posix_trace_start \{ event_filter = \[\] \}$' "$T/out" && ok || bad "recorded START: $(grep posix_trace_start "$T/out")"
    grep -Eq 'posix_trace_stop \{ auto = MANUAL \}$' "$T/out" && ok || bad "recorded STOP: $(grep posix_trace_stop "$T/out")"
fi

finish
