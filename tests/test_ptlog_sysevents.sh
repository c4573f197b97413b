#!/bin/bash
# ptlog dump shows the payloads of the standard's system events decoded
# (tools/ptlog/fields.c) with the schemas their log stores (the library's
# built-in ones, spec 5.6.7): START's and FILTER's event sets as event names
# (runs of unnamed ids as ranges), STOP's MANUAL or AUTOMATIC, ERROR's errno
# name (or number); OVERFLOW, RESUME and FLUSH_* carry nothing (the standard
# gives them no data). A payload whose size is not the schema's is flagged
# and decoded as far as it fits. A log that stores no schema (format 1.0, or
# JSON without schema keys) shows every payload as hex: ptlog does not guess
# a schema from a name (spec 5.6.6). --hex keeps every payload raw.
. "$(dirname "$0")/ptlog/lib.sh"

# A trace_event_set_t (17 64-bit words, little-endian) from the hex of its first bytes.
set_hex() { local h=$1; while [ ${#h} -lt 272 ]; do h=${h}0; done; echo "$h"; }
A=$(set_hex 0000000002370c10) # ids 33, 40-42, 44-45, 50-51, 60
EMPTY=$(set_hex "")
SYS=$(set_hex fe01)            # ids 1-8
SET='eventset[17]'
cat >sys.jsonl <<J
{"attributes":{"trace_name":"sys"},"event_types":[{"id":1,"name":"posix_trace_error","schema":"enum32 error {EIO=5, ENOSPC=28}"},{"id":2,"name":"posix_trace_start","schema":"$SET event_filter"},{"id":3,"name":"posix_trace_stop","schema":"enum32 auto {MANUAL=0, AUTOMATIC=1}"},{"id":4,"name":"posix_trace_overflow","schema":""},{"id":5,"name":"posix_trace_resume","schema":""},{"id":6,"name":"posix_trace_filter","schema":"$SET old_event_filter; $SET new_event_filter"},{"id":7,"name":"posix_trace_flush_start","schema":""},{"id":8,"name":"posix_trace_flush_stop","schema":""},{"id":32,"name":"posix_trace_unnamed_userevent"},{"id":33,"name":"io:x"},{"id":50,"name":"fifty"},{"id":60,"name":"has space"}]}
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
0.000000012 0 0x0 posix_trace_stop [long: 5 of 4 bytes] { auto = MANUAL }
0.000000013 0 0x0 posix_trace_start [short: 2 of 136 bytes] {}
0.000000014 0 0x0 posix_trace_overflow [long: 1 of 0 bytes] {}
0.000000015 0 0x0 io:x 01000000
W
expect_same "decoded system events" want.txt "$T/out"

# --hex: every payload raw, as before decoding existed.
expect_rc 0 "dump --hex" "$PTLOG" dump --relative --hex sys.jsonl
sed -n 2p "$T/out" | grep -q "^0.000000001 0 0x0 posix_trace_filter $EMPTY$A\$" && ok || bad "--hex: $(sed -n 2p "$T/out" | head -c 200)"
grep -q '^0.000000010 0 0x0 posix_trace_stop 01000000$' "$T/out" && ok || bad "--hex: stop"
grep -c '{' "$T/out" | grep -qx 0 && ok || bad "--hex still decodes"

# The same events in a log that stores no schema: every payload stays hex,
# whatever the names say (no guess, spec 5.6.6).
sed -E '1s/,"schema":"[^"]*"//g' sys.jsonl >plain.jsonl
grep -q schema plain.jsonl && bad "plain.jsonl still has schemas" || ok
expect_rc 0 "dump without schemas" "$PTLOG" dump --relative plain.jsonl
"$PTLOG" dump --relative --hex sys.jsonl >hex.txt
expect_same "no schema: as --hex" hex.txt "$T/out"

# Recorded logs: the v1.0 golden ones store no schema, so STOP stays hex;
# when the samples are built, a program's log (its schemas written by the
# POSIX layer) shows START with the filter in force and STOP's flag.
"$PTLOG" dump "$SRC/samples/golden/append.ptl" | grep posix_trace_st >golden.txt
printf '%s\n' "2026-01-01T00:00:00.000000000Z 4242 0x7f1a2b3c4d40 posix_trace_start" \
    "2026-01-01T00:00:02.000000000Z 4242 0x7f1a2b3c4d40 posix_trace_stop 00000000" >want.txt
expect_same "golden v1.0 log's system events" want.txt golden.txt
record=${TL_BUILD_DIR:-}/samples/record
if [ -x "$record" ]; then
    "$record" rec.ptl 10 >/dev/null 2>&1
    expect_rc 0 "dump a recorded log" "$PTLOG" dump rec.ptl
    grep -Eq '^[^ ]+ [0-9]+ 0x[0-9a-f]+( tid [0-9]+)?( \([^)]*\))? posix_trace_start \{ event_filter = \[\] \}$' "$T/out" && ok || bad "recorded START: $(grep posix_trace_start "$T/out")"
    grep -Eq 'posix_trace_stop \{ auto = MANUAL \}$' "$T/out" && ok || bad "recorded STOP: $(grep posix_trace_stop "$T/out")"
fi

finish
