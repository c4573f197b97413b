#!/bin/bash
# JSON input limits and edges: a JSON Lines line or a document value is at
# most 64 MiB (README.md, Limits), found in linear time even through a pipe
# that delivers 4 KiB at a time, and holds at most 524,288 values; a
# payload over the .ptl limit (16 MiB - 75 bytes) names that limit; a last
# line without its newline is still read.
. "$(dirname "$0")/ptlog/lib.sh"

MIB=$((1 << 20))
# line_of N: a JSON Lines event padded with blanks to exactly N bytes, plus its newline.
line_of() {
    local head='{"ts":1,"id":1,"name":"x"'
    { printf '%s' "$head"; head -c $(($1 - ${#head} - 1)) /dev/zero | tr '\0' ' '; printf '}\n'; }
}

# ---- long lines through a pipe of 4 KiB (F_SETPIPE_SZ): linear time --------------------------
# small_pipe FILE ARGS...: ptlog ARGS with FILE on standard input through a 4 KiB pipe;
# prints "exit elapsed cpu" (cpu: user + system of ptlog), stderr in small_pipe.err.
small_pipe() {
    python3 - "$PTLOG" "$@" <<'PY'
import fcntl, os, resource, subprocess, sys, time
ptlog, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: every read gets at most 4 KiB
start = time.monotonic()
with open("small_pipe.err", "wb") as err:
    p = subprocess.Popen([ptlog] + args, stdin=r, stdout=subprocess.DEVNULL, stderr=err)
os.close(r)
try:
    with open(path, "rb") as f:
        while True:
            chunk = f.read(4096)
            if not chunk or time.monotonic() - start > 30:
                break  # (a quadratic scan takes minutes: stop feeding it)
            os.write(w, chunk)
except BrokenPipeError:
    pass  # ptlog stopped reading (a refused line)
os.close(w)
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    rc = "timeout"
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, "%.2f" % (time.monotonic() - start), "%.2f" % (ru.ru_utime + ru.ru_stime))
PY
}

if command -v python3 >/dev/null; then
    line_of $((70 * MIB)) >line70.jsonl
    read -r rc elapsed cpu < <(small_pipe line70.jsonl dump -)
    echo "70 MiB line through a 4 KiB pipe: exit $rc in $elapsed s ($cpu s CPU)"
    [ "$rc" = 3 ] && ok || bad "70 MiB line: exit $rc, want 3 (refused)"
    grep -qx 'ptlog: <stdin>:1: line longer than the limit of 64 MiB' small_pipe.err && ok ||
        bad "70 MiB line: message $(cat small_pipe.err)"
    # CPU time, not wall time: a loaded machine stretched a linear read past 20 s (2.5 s of CPU)
    awk -v t="$cpu" 'BEGIN { exit !(t < 10) }' && ok || bad "70 MiB line took $cpu s of CPU (quadratic scan?)"
    rm -f line70.jsonl

    line_of $((64 * MIB)) >line64.jsonl
    read -r rc elapsed cpu < <(small_pipe line64.jsonl convert - --to jsonl -o line64.out)
    echo "64 MiB line through a 4 KiB pipe: exit $rc in $elapsed s ($cpu s CPU)"
    [ "$rc" = 0 ] && ok || bad "a line of exactly 64 MiB: exit $rc $(cat small_pipe.err)"
    awk -v t="$cpu" 'BEGIN { exit !(t < 10) }' && ok || bad "64 MiB line took $cpu s of CPU"
    [ "$(grep -c '"ts":1' line64.out)" = 1 ] && ok || bad "the 64 MiB line's event is not in the output"
    rm -f line64.jsonl line64.out
else
    echo "note: python3 missing, the 4 KiB pipe checks are skipped"
fi

# The limit exactly, from a file: 64 MiB is read, one byte more is refused.
line_of $((64 * MIB + 1)) >line64p1.jsonl
expect_rc 3 "line of 64 MiB + 1" "$PTLOG" dump line64p1.jsonl
expect_err '^ptlog: line64p1.jsonl:1: line longer than the limit of 64 MiB$' "64 MiB + 1"
{ echo '{"ts":5,"id":2}'; cat line64p1.jsonl; } >second.jsonl
expect_rc 3 "long second line" "$PTLOG" dump second.jsonl
expect_err '^ptlog: second.jsonl:2: line longer than the limit of 64 MiB$' "long second line"
rm -f line64p1.jsonl second.jsonl
# A document value: the same limit, with its line and column.
{ printf '{"events":[{"ts":1,"id":1},\n  {"ts":2,"id":1,"name":"x"'; head -c $((64 * MIB)) /dev/zero | tr '\0' ' '; printf '}]}\n'; } >doc.json
expect_rc 3 "document value over 64 MiB" "$PTLOG" dump doc.json
expect_err '^ptlog: doc.json:2:3: value longer than the limit of 64 MiB$' "document value"
rm -f doc.json

# ---- values in a line: at most 524,288 (jansson's tree of a 60 MB line once took 2.7 GB) ------
# many_values N: an event line with an unknown key holding N - 4 zeros (N values in all).
many_values() {
    { printf '{"ts":1,"id":1,"x":['; yes '0,' | head -n $(($1 - 5)) | tr -d '\n'; printf '0]}\n'; }
}
many_values 524288 >values_max.jsonl
expect_rc 0 "a line of exactly 524,288 values" "$PTLOG" dump values_max.jsonl
many_values 524289 >values_over.jsonl
expect_rc 3 "a line of 524,289 values" "$PTLOG" dump values_over.jsonl
expect_err '^ptlog: values_over.jsonl:1: a line of more than 524,288 values \(the limit: README, Limits\)$' \
    "values over the limit"
{ printf '{"events":[\n'; sed 's/$/]}/' values_over.jsonl | head -c -3; printf ']}\n'; } >values_over.json
expect_rc 3 "a document value of 524,289 values" "$PTLOG" dump values_over.json
expect_err '^ptlog: values_over.json:2:1: a value of more than 524,288 values' "document value over the limit"
if command -v python3 >/dev/null; then # what reading the largest takes
    rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$PTLOG" dump values_max.jsonl)
    echo "a line of 524,288 values: peak RSS $rss MiB"
    [ "$rss" -lt 200 ] && ok || bad "a line of 524,288 values took $rss MiB"
fi
rm -f values_max.jsonl values_over.jsonl values_over.json

# ---- payload limit: 16 MiB - 75 bytes, the largest a .ptl event holds -------------------------
LIMIT=$((16 * MIB - 75))
hex_of() { head -c $((2 * $1)) /dev/zero | tr '\0' 6; } # N bytes 0x66 ('f')
payload_line() { # BYTES [max_data_size]
    [ -n "${2:-}" ] && printf '{"attributes":{"max_data_size":%s}}\n' "$2"
    printf '{"ts":1,"id":1,"name":"big","data":"'
    hex_of "$1"
    printf '"}\n'
}
payload_line $((LIMIT + 1)) >over.jsonl
expect_rc 3 "payload over the limit" "$PTLOG" convert over.jsonl --to ptl -o over.ptl
expect_err "^ptlog: over.jsonl:1: event 0: key \"data\": payload of $((LIMIT + 1)) bytes is over the limit of $LIMIT bytes \(16 MiB - 75, the largest a .ptl event holds\)$" \
    "payload over the limit"
[ -e over.ptl ] && bad "output left for a refused payload" || ok
rm -f over.jsonl
payload_line "$LIMIT" "$LIMIT" >max.jsonl
expect_rc 0 "payload of exactly the limit" "$PTLOG" convert max.jsonl --to ptl -o max.ptl
n=$("$PTLOG" dump max.ptl | tr -cd f | wc -c)
[ "$n" = "$LIMIT" ] && ok || bad "the largest payload comes back with $n bytes, want $LIMIT"
rm -f max.jsonl max.ptl
# Larger than the chunks ptlog sizes for the declared max_data_size: says what to declare.
payload_line 204800 >mid.jsonl
expect_rc 3 "200 KiB payload, max_data_size not declared" "$PTLOG" convert mid.jsonl --to ptl -o mid.ptl
expect_err 'event 0 cannot be written: its payload of 204800 bytes is over the 130997 bytes that chunks sized for max_data_size 0 hold \(declare a max_data_size of at least 204800' \
    "200 KiB payload message"
payload_line 204800 204800 >mid.jsonl
expect_rc 0 "200 KiB payload, max_data_size declared" "$PTLOG" convert mid.jsonl --to ptl -o mid.ptl
# A max_data_size above 8 MiB used to fall back to 128 KiB chunks.
payload_line $((9 * MIB)) $((9 * MIB)) >nine.jsonl
expect_rc 0 "9 MiB payload, max_data_size 9 MiB" "$PTLOG" convert nine.jsonl --to ptl -o nine.ptl
n=$("$PTLOG" dump nine.ptl | tr -cd f | wc -c)
[ "$n" = $((9 * MIB)) ] && ok || bad "9 MiB payload: $n bytes dumped"
rm -f mid.* nine.*

# ---- more event types than a .ptl log holds (format-spec 9.1: 65536) --------------------------
# The input is valid but asks what no log can hold: exit 3 naming the type, and no output left.
python3 -c '
for i in range(65537):
    print("{\"ts\":%d,\"id\":%d,\"name\":\"t%d\"}" % (i + 1, i + 16, i))' >types.jsonl
expect_rc 3 "65537 event types" "$PTLOG" convert types.jsonl --to ptl -o types.ptl
expect_err '^ptlog: types.jsonl:65537: event 65536: key "name": more than 65,536 event types \(the most a .ptl log holds' \
    "65537 event types: the limit is named"
[ -e types.ptl ] && bad "output left after the type limit" || ok
sed -i '$d' types.jsonl
expect_rc 0 "exactly 65536 event types" "$PTLOG" convert types.jsonl --to ptl -o types.ptl
n=$("$PTLOG" info --json types.ptl | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["event_types"]))' 2>/dev/null)
[ "$n" = 65536 ] && ok || bad "65536 event types: info counts '$n'"
rm -f types.jsonl types.ptl

# ---- the last line without its newline is read -------------------------------------------------
printf '{"ts":1,"id":1,"name":"a"}\n{"ts":2,"id":1,"name":"a","data":"ff"}' >nonl.jsonl
printf '0.000000000 0 0x0 a\n0.000000001 0 0x0 a ff\n' >want
expect_rc 0 "no final newline" "$PTLOG" dump --relative nonl.jsonl
expect_same "the last event without a newline is kept" want "$T/out"
run bash -c "cat nonl.jsonl | '$PTLOG' dump --relative -"
expect_same "... also from a pipe" want "$T/out"
run bash -c "cat nonl.jsonl | '$PTLOG' convert - --to jsonl | '$PTLOG' dump --relative -"
expect_same "... and through convert" want "$T/out"
printf '{"ts":1,"id":1}\r\n{"ts":2,"id":1}\r\n{"status":{"events_recorded":7}}' >crlf.jsonl
expect_rc 0 "CRLF lines, a last status line without newline" "$PTLOG" convert crlf.jsonl --to json
grep -q '"events_recorded":7' "$T/out" && ok || bad "the last status line without newline is lost"
[ "$(grep -c '"ts":' "$T/out")" = 2 ] && ok || bad "CRLF lines: events lost"
printf '{"events":[{"ts":1,"id":1},{"ts":2,"id":1}]}' >nonl.json
expect_rc 0 "document without final newline" "$PTLOG" dump nonl.json
[ "$(wc -l <"$T/out")" = 2 ] && ok || bad "document without final newline: $(wc -l <"$T/out") events"

# ---- event types and schemas: what a .ptl log holds (a review) -----------------------------------
# 65,536 types are read, one more is exit 3 (types in descending order made reading quadratic: 200,000
# of them ran for minutes; 2 M names took 114 MB); the same schema repeated by 300,000 status lines is
# kept once (500,000 such lines took 594 MB); more than 4 MiB of schema text changes is exit 3.
types_jsonl() { # N: N events, each of a new type, ids descending
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "{\"ts\":%d,\"id\":%.0f,\"name\":\"t%d\"}\n", i + 1, 4000000000 - i, i }'
}
types_jsonl 65536 >types_max.jsonl
expect_rc 0 "65,536 event types, descending" "$PTLOG" dump types_max.jsonl
[ "$(wc -l <"$T/out")" = 65536 ] && ok || bad "65,536 event types, descending: $(wc -l <"$T/out") events"
types_jsonl 65537 >types_over.jsonl
expect_rc 3 "65,537 event types, dump" "$PTLOG" dump types_over.jsonl
expect_err '^ptlog: types_over.jsonl:65537: event 65536: key "name": more than 65,536 event types' "65,537 types"
rm -f types_max.jsonl types_over.jsonl
{ echo '{"ts":1,"id":40,"name":"x","data":"01000000"}'
  awk 'BEGIN { for (i = 0; i < 300000; i++) print "{\"status\":{},\"event_types\":[{\"id\":40,\"name\":\"x\",\"schema\":\"u32 a; u32 b; u32 c; u32 d; char[32] e\"}]}" }'
  echo '{"ts":2,"id":40,"name":"x","data":"02000000"}'; } >repeat.jsonl
if command -v python3 >/dev/null; then
    # Under ASan, freed memory waits in its quarantine (419 MiB here): none, so that the peak is what ptlog
    # keeps (ignored by other builds).
    rss=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$PTLOG" dump repeat.jsonl)
    echo "300,000 status lines of one schema: exit and peak RSS (MiB): $rss"
    [ "${rss% *}" = 0 ] && [ "${rss#* }" -lt 100 ] && ok || bad "300,000 status lines of one schema: exit, MiB: $rss"
fi
awk 'BEGIN { f = ""; for (k = 0; k < 30; k++) f = f "u32 field" k "; "
    print "{\"ts\":1,\"id\":40,\"name\":\"x\",\"data\":\"01000000\"}"
    for (i = 0; i < 30000; i++) printf "{\"status\":{},\"event_types\":[{\"id\":40,\"name\":\"x\",\"schema\":\"%schar[%d] e\"}]}\n", f, 32 + i % 2 }' >changes.jsonl
expect_rc 3 "30,000 schema changes of 400 bytes" "$PTLOG" dump changes.jsonl
expect_err 'more than 4 MiB of schema text in all' "30,000 schema changes"
rm -f repeat.jsonl changes.jsonl

finish
