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
expect_same "ptl -> jsonl -> ptl -> jsonl keeps every ktid" a.jsonl b.jsonl
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

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
