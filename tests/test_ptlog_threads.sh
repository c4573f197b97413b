#!/bin/bash
# Kernel thread ids (format 1.1) in ptlog: dump shows "tid N" beside the
# pthread id, JSON and JSON Lines carry "ktid", an import of them writes a
# log that gives them back (a round trip .ptl -> JSON Lines -> .ptl -> JSON
# Lines is exact), info counts the thread definitions; logs without kernel
# tids (format 1.0) print as before.
. "$(dirname "$0")/ptlog/lib.sh"
GOLDEN=$SRC/samples/golden/1.1

expect_rc 0 "dump threads.ptl" "$PTLOG" dump "$GOLDEN/threads.ptl"
grep -q '^2026-01-01T00:00:00.000000000Z 4242 0x7f1a2b3c4d40 tid 4242 posix_trace_start$' "$T/out" && ok ||
    bad "dump: no kernel tid beside the pthread id: $(head -1 "$T/out")"
# the reused handle: one pthread id, two kernel threads, in that order
grep -o '0x7f1a2b3c5e80 tid [0-9]*' "$T/out" | uniq >handles
printf '0x7f1a2b3c5e80 tid 4250\n0x7f1a2b3c5e80 tid 4301\n' >want
expect_same "dump: the handle's two kernel threads" want handles
[ "$(grep -c ' tid ' "$T/out")" = 302 ] && ok || bad "dump: not every event has its kernel tid"

expect_rc 0 "dump of a format 1.0 log" "$PTLOG" dump "$SRC/samples/golden/append.ptl"
grep -q ' tid ' "$T/out" && bad "a 1.0 log shows kernel tids" || ok

expect_rc 0 "convert to jsonl" "$PTLOG" convert "$GOLDEN/threads.ptl" --to jsonl -o a.jsonl
grep -q '"tid":139750371253888,"ktid":4301,' a.jsonl && ok || bad "jsonl: no ktid key: $(sed -n 250p a.jsonl)"
if command -v python3 >/dev/null; then
    python3 - a.jsonl <<'EOF' && ok || bad "jsonl: ktid values"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if '"ts"' in l]
assert len(ev) == 302, len(ev)
k = {(e["tid"], e["ktid"]) for e in ev}
assert k == {(0x7f1a2b3c4d40, 4242), (0x7f1a2b3c5e80, 4250), (0x7f1a2b3c5e80, 4301)}, k
EOF
fi
expect_rc 0 "jsonl back to .ptl" "$PTLOG" convert a.jsonl --to ptl -o b.ptl
expect_rc 0 "and to jsonl again" "$PTLOG" convert b.ptl --to jsonl -o b.jsonl
# The copy is a log of the writer's format (ptl_minor), the rest is the same.
sed 's/"ptl_minor":[0-9]*//' a.jsonl >a.norm
sed 's/"ptl_minor":[0-9]*//' b.jsonl >b.norm
expect_same "ptl -> jsonl -> ptl -> jsonl keeps every ktid" a.norm b.norm
expect_rc 0 "convert to json" "$PTLOG" convert "$GOLDEN/threads.ptl" --to json -o a.json
expect_rc 0 "json back to .ptl" "$PTLOG" convert a.json --to ptl -o c.ptl
expect_rc 0 "dump the copy" "$PTLOG" dump --hex c.ptl
expect_same "json round trip: the same dump" "$GOLDEN/threads.dump" "$T/out"
expect_rc 0 "convert a 1.0 log to jsonl" "$PTLOG" convert "$SRC/samples/golden/append.ptl" --to jsonl -o old.jsonl
grep -q '"ktid"' old.jsonl && bad "a 1.0 log's JSON has ktid keys" || ok

# Import: a ktid that is not a 32-bit integer is refused with its place.
printf '{"ts":1,"id":1,"name":"a","pid":1,"tid":2,"ktid":4294967296}\n' >bad.jsonl
expect_rc 3 "ktid out of range" "$PTLOG" convert bad.jsonl --to ptl -o bad.ptl
grep -q 'ktid' "$T/err" && ok || bad "ktid out of range: $(cat "$T/err")"

expect_rc 0 "info" "$PTLOG" info "$GOLDEN/threads.ptl"
grep -q '^format: *.ptl 1.1$' "$T/out" && ok || bad "info: format"
grep -q '^threads: *3 kernel thread ids recorded$' "$T/out" && ok || bad "info: $(grep threads "$T/out")"
expect_rc 0 "info --json" "$PTLOG" info --json "$GOLDEN/threads.ptl"
grep -q '"threads":3,' "$T/out" && ok || bad "info --json: no thread count"
expect_rc 0 "info of a 1.0 log" "$PTLOG" info "$SRC/samples/golden/append.ptl"
grep -q '^threads:' "$T/out" && bad "info of a 1.0 log counts threads" || ok

# Threads are found by the ids a user sees (issue 26 item 6): --tid takes the kernel tid as well as
# the pthread_t; info --threads has a KTID column (a reused handle is two threads) and JSON "ktid";
# Chrome's tid is the kernel tid.
expect_rc 0 "dump --tid KTID" "$PTLOG" dump --tid 4250 "$GOLDEN/threads.ptl"
n=$(wc -l <"$T/out")
[ "$n" -gt 0 ] && [ "$(grep -c ' 0x7f1a2b3c5e80 tid 4250 ' "$T/out")" = "$n" ] && ok ||
    bad "dump --tid 4250: $n lines, $(grep -c ' tid 4250 ' "$T/out") of kernel thread 4250"
"$PTLOG" dump --tid 0x7f1a2b3c5e80 "$GOLDEN/threads.ptl" | grep -o 'tid [0-9]*' | uniq >got
printf 'tid 4250\ntid 4301\n' >want
expect_same "dump --tid PTHREAD: both threads of the handle" want got
a=$("$PTLOG" dump --tid 4250 "$GOLDEN/threads.ptl" | wc -l)
b=$("$PTLOG" dump --tid 4301 "$GOLDEN/threads.ptl" | wc -l)
c=$("$PTLOG" dump --tid 4250 --tid 4301 "$GOLDEN/threads.ptl" | wc -l)
d=$("$PTLOG" dump --tid 0x7f1a2b3c5e80 "$GOLDEN/threads.ptl" | wc -l)
[ "$b" -gt 0 ] && [ $((a + b)) = "$c" ] && [ "$c" = "$d" ] && ok || bad "--tid: 4250 $a, 4301 $b, both $c, the handle $d"
expect_rc 0 "filter --tid KTID" "$PTLOG" filter --tid 4301 "$GOLDEN/threads.ptl" -o k.ptl
[ "$("$PTLOG" dump k.ptl | wc -l)" = "$b" ] && ok || bad "filter --tid 4301 kept $("$PTLOG" dump k.ptl | wc -l), want $b"
expect_rc 0 "info --threads" "$PTLOG" info --threads "$GOLDEN/threads.ptl"
sed -n '/^threads:$/,$p' "$T/out" | awk 'NR > 1 { print $1, $2, $3 }' >got
printf 'PID TID KTID\n4242 0x7f1a2b3c4d40 4242\n4242 0x7f1a2b3c5e80 4250\n4242 0x7f1a2b3c5e80 4301\n' >want
expect_same "info --threads: a KTID column, the reused handle on two rows" want got
expect_rc 0 "info --threads --json" "$PTLOG" info --threads --json "$GOLDEN/threads.ptl"
python3 - "$T/out" <<'EOF' && ok || bad "info --threads --json: ktid"
import json, sys
t = json.load(open(sys.argv[1]))["threads"]
assert [(x["tid"], x["ktid"]) for x in t] == [(0x7f1a2b3c4d40, 4242), (0x7f1a2b3c5e80, 4250), (0x7f1a2b3c5e80, 4301)], t
assert sum(x["count"] for x in t) == 302
EOF
expect_rc 0 "info --threads of a 1.0 log" "$PTLOG" info --threads --json "$SRC/samples/golden/append.ptl"
grep -q '"ktid"' "$T/out" && bad "a 1.0 log's threads have ktid keys" || ok
expect_rc 0 "to chrome" "$PTLOG" convert "$GOLDEN/threads.ptl" --to chrome -o t.chrome
# A thread without kernel tid gets a small number, never one a kernel tid of the process shows.
printf '%s\n' '{"attributes":{}}' '{"ts":1,"id":1,"name":"a","pid":5,"tid":16}' \
    '{"ts":2,"id":1,"name":"a","pid":5,"tid":17,"ktid":1}' '{"ts":3,"id":1,"name":"a","pid":5,"tid":18,"ktid":5}' \
    '{"ts":4,"id":1,"name":"a","pid":5,"tid":19}' >mixed.jsonl
expect_rc 0 "mixed to chrome" "$PTLOG" convert mixed.jsonl --to chrome -o mixed.chrome
python3 - t.chrome mixed.chrome <<'EOF' && ok || bad "chrome: tid is not the kernel tid"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tids = {(e["tid"], e["args"]["pthread"]) for e in ev if e["ph"] != "M"}
assert tids == {(4242, "0x7f1a2b3c4d40"), (4250, "0x7f1a2b3c5e80"), (4301, "0x7f1a2b3c5e80")}, tids
names = {e["tid"]: e["args"]["name"] for e in ev if e["name"] == "thread_name"}
assert names == {4242: "pthread 0x7f1a2b3c4d40", 4250: "pthread 0x7f1a2b3c5e80", 4301: "pthread 0x7f1a2b3c5e80"}, names
ev = json.load(open(sys.argv[2]))["traceEvents"]
got = [(e["tid"], e["args"]["pthread"]) for e in ev if e["ph"] != "M"]
assert got == [(1, "0x10"), (2, "0x11"), (5, "0x12"), (3, "0x13")], got
EOF

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
