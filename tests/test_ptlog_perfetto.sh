#!/bin/bash
# ptlog convert --to perfetto: Perfetto's protobuf trace, decoded by protoc
# (Debian's protobuf-compiler) against tests/ptlog/perfetto_trace.proto, the
# subset ptlog writes with Perfetto's field numbers; tests/ptlog/check_perfetto.py
# rebuilds tracks and events from the decoded text (checking interning,
# incremental timestamps, track descriptors and slice balance on the way) and
# the assertions below check them against the input. Skipped (77) without
# protoc or python3.
. "$(dirname "$0")/ptlog/lib.sh"
command -v protoc >/dev/null || { echo "SKIP: protoc is needed (apt-get install protobuf-compiler)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to check the decoded trace"; exit 77; }

# decode NAME: NAME.pftrace -> NAME.txt (protoc) -> NAME.model.json (tracks and events)
decode() {
    protoc -I"$GOLD" --decode=perfetto.protos.Trace perfetto_trace.proto <"$1.pftrace" >"$1.txt" 2>"$1.err" &&
        [ ! -s "$1.err" ] && python3 "$GOLD/check_perfetto.py" "$1.txt" >"$1.model.json" 2>"$1.err"
}

# Two processes, threads with and without kernel tids, slices that nest and
# some that do not, one left open, a typed event, an untyped payload, a cut
# one, a name that is not UTF-8, an event older than the one before it,
# OVERFLOW/RESUME and overrun counts in the status.
cat >in.jsonl <<'J'
{"format":{"schema":"tracelog","version":1},"attributes":{"trace_name":"pf","process":{"pid":100,"program":"/usr/bin/demo"}},"event_types":[{"id":4,"name":"posix_trace_overflow"},{"id":5,"name":"posix_trace_resume"},{"id":40,"name":"work:begin"},{"id":41,"name":"work:end"},{"id":42,"name":"io.begin"},{"id":43,"name":"io.end"},{"id":44,"name":"tick"},{"id":45,"name":"x:end"},{"id":46,"name":"net.rx","schema":"u32 len; u16 port; enum8 state {IDLE=0, BUSY=1}; f64 latency; i8 delta; char[8] iface"},{"id":47,"name":"caf\ufffd","name_hex":"636166e9"}]}
{"id":40,"ts":1000,"pid":100,"tid":139637976731648,"ktid":100}
{"id":42,"ts":1100,"pid":100,"tid":139637976731648,"ktid":100,"data":"01"}
{"id":46,"ts":1150,"pid":100,"tid":139637976731648,"ktid":100,"data":"dc050000bb010100000000000000f03fff657468300000000000000000000000"}
{"id":43,"ts":1200,"pid":100,"tid":139637976731648,"ktid":100}
{"id":41,"ts":1300,"pid":100,"tid":139637976731648,"ktid":100}
{"id":44,"ts":1250,"pid":100,"tid":139637976735744,"data":"00ff","truncation":1}
{"id":45,"ts":1400,"pid":200,"tid":5}
{"id":4,"ts":1500,"pid":100,"tid":139637976735744}
{"id":4,"ts":1550,"pid":200,"tid":5}
{"id":5,"ts":1600,"pid":100,"tid":139637976735744}
{"id":47,"ts":1700,"pid":200,"tid":5}
{"id":5,"ts":1750,"pid":200,"tid":5}
{"id":40,"ts":1800,"pid":200,"tid":5}
{"status":{"events_recorded":16,"events_written":11,"stream_overruns":3,"log_overruns":0}}
J
expect_rc 0 "convert to perfetto" "$PTLOG" convert in.jsonl --to perfetto -o in.pftrace
decode in && ok || bad "decode: $(head -c 400 in.err)"
python3 - in.model.json <<'PY' && ok || bad "crafted log: tracks or events are not as expected"
import json, sys
m = json.load(open(sys.argv[1]))
tracks = {t["uuid"]: t for t in m["tracks"]}
procs = {t["pid"]: t for t in tracks.values() if t["kind"] == "process"}
assert procs[100]["name"] == "demo" and procs[100]["cmdline"] == ["/usr/bin/demo"], procs
assert procs[200]["name"] == "pid 200" and procs[200]["cmdline"] == []
threads = {(t["pid"], t["tid"]): t for t in tracks.values() if t["kind"] == "thread"}
assert sorted(threads) == [(100, 1), (100, 100), (200, 1)], sorted(threads)   # kernel tid, else 1, 2, ...
assert threads[(100, 100)]["name"] == "pthread 0x7f0000001000"
assert threads[(100, 1)]["parent"] == procs[100]["uuid"] and threads[(200, 1)]["parent"] == procs[200]["uuid"]
main, other, p200 = (threads[k]["uuid"] for k in ((100, 100), (100, 1), (200, 1)))
ev = [(e["ts"] - 1000, e["track"], e["type"][5:], e.get("name"), e.get("args"), e.get("value")) for e in m["events"]]
T = lambda *a: tuple(a)
want = [
    T(0, main, "SLICE_BEGIN", "work", None, None),
    T(100, main, "SLICE_BEGIN", "io", {"data": "01"}, None),
    T(150, main, "INSTANT", "net.rx", {"len": 1500, "port": 443, "state": "BUSY", "latency": 1.0, "delta": -1,
                                       "iface": "eth0"}, None),
    T(200, main, "SLICE_END", "io", None, None),
    T(300, main, "SLICE_END", "work", None, None),
    T(250, other, "INSTANT", "tick", {"data": "00ff", "truncation": 1}, None),   # older: absolute time
    T(400, p200, "INSTANT", "x:end", None, None),                               # no open slice: an instant
    T(500, other, "INSTANT", "posix_trace_overflow", None, None),
]
assert ev[:len(want)] == want, ev[:len(want)]
overflow = {tracks[t["parent"]]["pid"]: t["uuid"] for t in tracks.values() if t["kind"] == "counter" and t["name"] == "overflow"}
assert len([t for t in tracks.values() if t["kind"] == "counter"]) == 3, tracks   # one overflow per process, overruns
ov = [(e[0], e[5]) for e in ev if e[1] == overflow[100]]
assert ov == [(500, 1), (600, 0)], ov
ov = [(e[0], e[5]) for e in ev if e[1] == overflow[200]]
assert ov == [(550, 1), (750, 0)], ov                                   # interleaved with pid 100's
counters = {t["name"]: t for t in tracks.values() if t["kind"] == "counter"}
assert (700, p200, "INSTANT", "caf\ufffd", None, None) in ev          # not UTF-8: U+FFFD, as in JSON
assert (800, p200, "SLICE_BEGIN", "work", None, None) in ev
end = [e for e in ev if e[1] == p200 and e[2] == "SLICE_END"]
assert end == [(800, p200, "SLICE_END", "work", {"unfinished": True}, None)], end   # closed at the last ts
over = [(e[0], e[5]) for e in ev if e[1] == counters["overruns"]["uuid"]]
assert over == [(0, 0), (800, 3)], over                                 # the status's stream_overruns
assert m["interned"]["event_names"] == 8, m["interned"]                 # each name once
PY

# The same events from a .ptl log, and logs the POSIX layer recorded (system events, threads, a ring).
expect_rc 0 "jsonl to ptl" "$PTLOG" convert in.jsonl --to ptl -o in.ptl
expect_rc 0 "ptl to perfetto" "$PTLOG" convert in.ptl --to perfetto -o in.ptl.pftrace
expect_same "same trace from .ptl and JSONL" in.pftrace in.ptl.pftrace
"$TL_BUILD_DIR/tests/make_typed" typed.ptl || bad "make_typed"
for f in "$SRC"/samples/golden/append.ptl "$SRC"/samples/golden/loop.ptl typed.ptl; do
    n=$("$PTLOG" convert "$f" --to jsonl | grep -c '"ts":')
    expect_rc 0 "convert $(basename "$f")" "$PTLOG" convert "$f" --to perfetto -o rec.pftrace
    if decode rec; then
        got=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(sum(1 for e in m["events"] if e["type"] != "TYPE_COUNTER" and "unfinished" not in e.get("args", {})))' rec.model.json)
        [ "$got" = "$n" ] && ok || bad "$(basename "$f"): $got track events for $n events"
    else
        bad "$(basename "$f"): $(head -c 400 rec.err)"
    fi
done

# Interning keeps a long log small: 20000 events of two names hold each name once;
# the trace is a third of Chrome's JSON (8-byte payloads, as hex in both).
make_many many 20000
expect_rc 0 "many to perfetto" "$PTLOG" convert many.ptl --to perfetto -o many.pftrace
expect_rc 0 "many to chrome" "$PTLOG" convert many.ptl --to chrome -o many.json
protoc -I"$GOLD" --decode=perfetto.protos.Trace perfetto_trace.proto <many.pftrace >many.txt || bad "decode many"
[ "$(grep -c '^    event_names {' many.txt)" = 2 ] && ok || bad "many: event names interned $(grep -c 'event_names {' many.txt) times"
pf=$(stat -c %s many.pftrace) js=$(stat -c %s many.json)
[ $((pf * 3)) -lt "$js" ] && ok || bad "many: perfetto $pf bytes, not below 1/3 of chrome's $js"

# Usage: not an input format; never to a terminal (script(1) gives ptlog one); no output on failure.
if command -v script >/dev/null; then
    script -qec "'$PTLOG' convert in.jsonl --to perfetto" /dev/null >tty.out 2>&1
    rc=$?
    [ "$rc" = 2 ] && grep -q 'refusing to write a binary Perfetto trace to a terminal; use -o FILE' tty.out &&
        ok || bad "--to perfetto on a terminal: exit $rc, $(head -c 200 tty.out)"
fi
expect_rc 2 "--from perfetto" "$PTLOG" convert in.jsonl --from perfetto --to json
expect_err "unknown format 'perfetto'" "--from perfetto"
printf '{"attributes":{},"event_types":[]}\n{"id":1,"ts":"bad"}\n' >broken.jsonl
expect_rc 3 "broken input" "$PTLOG" convert broken.jsonl --to perfetto -o broken.pftrace
[ ! -e broken.pftrace ] && ok || bad "a failed conversion left broken.pftrace"


# Event names are interned up to 131,072: past them an event's name is written in full (an event of an
# unnamed id is named event#ID, and every id of a crafted log was interned: 3 M ids took 297 MB).
awk 'BEGIN { for (i = 0; i < 131080; i++) printf "{\"id\":%d,\"ts\":%d,\"pid\":7,\"tid\":1}\n", 100000 + i, i + 1 }' >ids.jsonl
expect_rc 0 "131,080 unnamed ids to perfetto" "$PTLOG" convert ids.jsonl --to perfetto -o ids.pftrace
# (protoc's text, counted: the model of check_perfetto.py takes 30 s on 2 M lines)
if protoc -I"$GOLD" --decode=perfetto.protos.Trace perfetto_trace.proto <ids.pftrace >ids.txt 2>ids.err; then
    interned=$(grep -c '^ *event_names {' ids.txt)
    named=$(grep -c '^ *name: "event#' ids.txt) # interned once each, or written in full in the event
    [ "$interned" -le 131072 ] && [ "$named" = 131080 ] && grep -q 'name: "event#231079"' ids.txt && ok ||
        bad "131,080 unnamed ids: $interned interned, $named names in all"
else
    bad "131,080 unnamed ids: the trace does not decode: $(head -c 300 ids.err)"
fi
rm -f ids.*
finish
