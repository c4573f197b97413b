#!/bin/bash
# ptlog convert --to chrome: the output follows the Trace Event Format rules
# (tests/ptlog/check_chrome.py: integer pid/tid below 2^31, ts sorted, every
# process and thread named, B/E balanced per thread) on crafted and recorded
# logs; threads get small numbers per process and keep their pthread_t in
# args; slices that do not nest become instant events, slices left open are
# closed at the end. Where practical it is loaded by a real consumer:
# speedscope (npm package, installed into a cache directory; skipped with a
# message when it cannot be installed).
. "$(dirname "$0")/ptlog/lib.sh"
if ! command -v python3 >/dev/null; then
    echo "SKIP: python3 is needed to check the Chrome trace"
    exit 77
fi
CHECK="python3 $GOLD/check_chrome.py"

# Two processes whose threads have the same pthread_t, a pthread_t above
# 2^63, a pid above 2^31, slices on two threads of one process that overlap
# in time, an end without a begin, an end that is not the innermost slice's,
# and slices still open at the end.
cat >threads.jsonl <<'J'
{"format":{"schema":"tracelog","version":1},"attributes":{"trace_name":"threads","process":{"pid":100,"program":"/usr/bin/demo"}},"event_types":[{"id":40,"name":"work:begin"},{"id":41,"name":"work:end"},{"id":42,"name":"io:begin"},{"id":43,"name":"io:end"},{"id":44,"name":"tick"},{"id":45,"name":"x:end"},{"id":46,"name":"open:begin"}]}
{"id":40,"ts":1000,"pid":100,"tid":139637976731648}
{"id":40,"ts":1100,"pid":100,"tid":139637976735744}
{"id":42,"ts":1200,"pid":100,"tid":139637976731648,"data":"01"}
{"id":43,"ts":1300,"pid":100,"tid":139637976731648,"data":"02"}
{"id":41,"ts":1400,"pid":100,"tid":139637976735744}
{"id":41,"ts":1500,"pid":100,"tid":139637976731648}
{"id":44,"ts":1600,"pid":100,"tid":"0xffffffffffffff00","data":"00ff"}
{"id":45,"ts":1700,"pid":200,"tid":139637976731648}
{"id":40,"ts":1800,"pid":200,"tid":139637976731648}
{"id":43,"ts":1900,"pid":200,"tid":139637976731648}
{"id":44,"ts":2000,"pid":4294967295,"tid":5,"truncation":1,"data":"41"}
{"id":46,"ts":2100,"pid":100,"tid":139637976731648}
{"id":44,"ts":2300,"pid":100,"tid":139637976735744}
J
expect_rc 0 "convert to chrome" "$PTLOG" convert threads.jsonl --to chrome -o threads.json
run $CHECK threads.json
[ "$RC" = 0 ] && ok || bad "crafted log: $(cat "$T/out")"
python3 - threads.json <<'PY' && ok || bad "crafted log: threads, slices or args are not as expected"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
meta = {(e["name"], e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
assert meta[("process_name", 100, 0)] == "demo (pid 100)", meta
assert meta[("process_name", 200, 0)] == "pid 200"
assert meta[("process_name", 2147483647, 0)] == "pid 4294967295"       # renumbered, named by its real pid
assert meta[("thread_name", 100, 1)] == "pthread 0x7f0000001000"
assert meta[("thread_name", 100, 2)] == "pthread 0x7f0000002000"
assert meta[("thread_name", 100, 3)] == "pthread 0xffffffffffffff00"
assert meta[("thread_name", 200, 1)] == "pthread 0x7f0000001000"      # same pthread, other process
assert meta[("thread_name", 2147483647, 1)] == "pthread 0x5"
body = [e for e in ev if e["ph"] != "M"]
def find(name, ph, pid, tid):
    return [e for e in body if (e["name"], e["ph"], e["pid"], e["tid"]) == (name, ph, pid, tid)]
assert [e["ts"] for e in find("work", "B", 100, 1)] == [0.0] and [e["ts"] for e in find("work", "E", 100, 1)] == [0.5]
assert [e["ts"] for e in find("work", "B", 100, 2)] == [0.1] and [e["ts"] for e in find("work", "E", 100, 2)] == [0.4]
assert find("io", "B", 100, 1)[0]["args"] == {"pthread": "0x7f0000001000", "data": "01"}
assert find("io", "E", 100, 1)[0]["args"] == {"end_data": "02"}
assert "args" not in find("work", "E", 100, 1)[0]
assert find("tick", "i", 100, 3)[0]["args"] == {"pthread": "0xffffffffffffff00", "data": "00ff"}
assert find("tick", "i", 2147483647, 1)[0]["args"] == {"pthread": "0x5", "data": "41", "truncation": 1}
assert len(find("x:end", "i", 200, 1)) == 1                             # no open slice: an instant
assert len(find("io:end", "i", 200, 1)) == 1                            # not the innermost slice: an instant
for name, pid in (("open", 100), ("work", 200)):                       # left open: closed at the last ts
    e = find(name, "E", pid, 1)
    assert len(e) == 1 and e[0]["ts"] == 1.3 and e[0]["args"] == {"unfinished": True}, e
assert sum(e["ph"] == "B" for e in body) == sum(e["ph"] == "E" for e in body) == 5
PY

# Nesting deeper than 256 slices on one thread: the deeper begins, and the
# ends that then match nothing, are instant events.
awk 'BEGIN {
    print "{\"attributes\":{},\"event_types\":[{\"id\":1,\"name\":\"d:begin\"},{\"id\":2,\"name\":\"d:end\"}]}"
    for (i = 0; i < 600; i++) printf "{\"id\":%d,\"ts\":%d,\"pid\":1,\"tid\":1}\n", i < 300 ? 1 : 2, 1000 + i
}' >deep.jsonl
expect_rc 0 "deep nesting" "$PTLOG" convert deep.jsonl --to chrome -o deep.json
run $CHECK deep.json
[ "$RC" = 0 ] && ok || bad "deep nesting: $(cat "$T/out")"
[ "$(grep -c '"ph":"B"' deep.json)/$(grep -c '"ph":"E"' deep.json)/$(grep -c '"name":"d:begin","ph":"i"' deep.json)" = 256/256/44 ] &&
    ok || bad "deep nesting: B/E/instant counts $(grep -c '"ph":"B"' deep.json)/$(grep -c '"ph":"E"' deep.json)"

# Recorded logs (two threads, system events, a ring) and a multi-chunk log of three processes.
make_many many 3000
for f in "$SRC"/samples/golden/append.ptl "$SRC"/samples/golden/loop.ptl "$SRC"/samples/golden/until_full.ptl many.ptl; do
    expect_rc 0 "convert $(basename "$f")" "$PTLOG" convert "$f" --to chrome -o rec.json
    run $CHECK rec.json
    [ "$RC" = 0 ] && ok || bad "$(basename "$f"): $(cat "$T/out")"
done

# Limits (README.md "Limits"): 65,536 threads are drawn, one more is exit 3 with no output (a log of a few KiB
# named a million threads and took 372 MB); past 1,048,576 open slices a begin is an instant event.
many_threads() { # N: N threads of pid 7, one work:begin each
    echo '{"format":{"schema":"tracelog","version":1},"attributes":{"trace_name":"many"},"event_types":[{"id":40,"name":"work:begin"}]}'
    awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "{\"id\":40,\"ts\":%d,\"pid\":7,\"tid\":%d}\n", i, i }'
}
many_threads 65536 | "$PTLOG" convert - --to ptl -o t65536.ptl && many_threads 65537 | "$PTLOG" convert - --to ptl -o t65537.ptl ||
    bad "many threads: the logs were not made"
for to in chrome perfetto; do
    expect_rc 0 "$to of 65,536 threads" "$PTLOG" convert t65536.ptl --to $to -o at-limit.$to
    rm -f past-limit.$to
    expect_rc 3 "$to of 65,537 threads" "$PTLOG" convert t65537.ptl --to $to -o past-limit.$to
    expect_err '^ptlog: t65537.ptl: more than 65536 threads: .*ptlog filter' "$to of 65,537 threads"
    [ ! -e past-limit.$to ] && [ -z "$(ls past-limit.$to.tmp.* 2>/dev/null)" ] && ok || bad "$to: an output was left"
done
python3 - at-limit.chrome <<'PY' && ok || bad "65,536 threads: not a B per thread in the Chrome output"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
assert len({e["tid"] for e in ev if e.get("ph") == "B"}) == 65536
PY
{
    echo '{"format":{"schema":"tracelog","version":1},"attributes":{"trace_name":"deep"},"event_types":[{"id":40,"name":"work:begin"}]}'
    awk 'BEGIN { for (t = 1; t <= 4097; t++) for (d = 0; d < 256; d++) printf "{\"id\":40,\"ts\":%d,\"pid\":7,\"tid\":%d}\n", ++n, t }'
} | "$PTLOG" convert - --to ptl -o deep.ptl || bad "deep: the log was not made"
expect_rc 0 "chrome of 1,048,832 begins" "$PTLOG" convert deep.ptl --to chrome -o deep.json
# one event a line: the last 256 begins (thread 4097's) are instants, and the thread's first is one
[ "$(grep -c '"ph":"B"' deep.json)/$(grep -c '"name":"work:begin","ph":"i"' deep.json)" = 1048576/256 ] && ok ||
    bad "open slices past the limit: $(grep -c '"ph":"B"' deep.json) B, $(grep -c '"ph":"i"' deep.json) i"
rm -f deep.json deep.ptl t65536.ptl t65537.ptl at-limit.*

# A real consumer: speedscope's own importer (a pinned version, cached between runs).
SPEEDSCOPE=speedscope@1.25.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tracelog-tests/$SPEEDSCOPE
bundle=$(ls "$cache"/node_modules/speedscope/dist/release/speedscope-*.js 2>/dev/null | head -1)
if [ -z "$bundle" ] && command -v npm >/dev/null && command -v node >/dev/null; then
    mkdir -p "$cache" &&
        timeout 180 npm install --prefix "$cache" --no-audit --no-fund --no-save "$SPEEDSCOPE" >"$T/npm.log" 2>&1
    bundle=$(ls "$cache"/node_modules/speedscope/dist/release/speedscope-*.js 2>/dev/null | head -1)
fi
if [ -z "$bundle" ]; then
    echo "SKIP (speedscope): node/npm missing or 'npm install $SPEEDSCOPE' failed: $(tail -c 300 "$T/npm.log" 2>/dev/null)"
else
    cp threads.json trace.json # speedscope chooses its importer by file name first
    run node "$GOLD/speedscope_import.mjs" "$bundle" trace.json
    if [ "$RC" = 77 ]; then
        echo "SKIP (speedscope): $(cat "$T/err")"
    else
        [ "$RC" = 0 ] && ok || bad "speedscope refused the trace: $(cat "$T/err")"
        python3 - "$T/out" <<'PY' && ok || bad "speedscope: $(head -c 600 "$T/out")"
import json, sys
r = json.load(open(sys.argv[1]))
names = sorted(p["name"] for p in r["profiles"])
# one profile per thread with slices, named by the metadata events
assert names == ["demo (pid 100) (pid 100), pthread 0x7f0000001000 (tid 1)",
                 "demo (pid 100) (pid 100), pthread 0x7f0000002000 (tid 2)",
                 "pid 200 (pid 200), pthread 0x7f0000001000 (tid 1)"], names
assert all(p["weight"] > 0 for p in r["profiles"])
bad = [w for w in r["warnings"] if "Doing nothing" in w or "stack was empty" in w]
assert not bad, bad  # unbalanced B/E
PY
    fi
fi

finish
