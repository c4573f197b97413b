#!/bin/bash
# dump --delta (time since the previous event printed, like babeltrace2's
# delta or tshark -t dd) and info --threads (per pid and thread id: count,
# first and last time, span).
. "$(dirname "$0")/ptlog/lib.sh"
make_small

# ---- dump --delta ---------------------------------------------------------------------------
expect_rc 0 "dump --delta" "$PTLOG" dump --delta small.ptl
golden dump_delta.txt "$T/out"
# The other fields are the plain dump's, DELTA is inserted after TIME.
cut -d' ' -f1,3- "$T/out" >got
"$PTLOG" dump small.ptl >want
expect_same "--delta only adds a field" want got
# DELTA is the difference of consecutive --relative times.
"$PTLOG" dump --relative small.ptl | awk '{ split($1, a, "."); ns = a[1] * 1000000000 + a[2];
    d = NR == 1 ? 0 : ns - prev; prev = ns; printf "+%d.%09d\n", int(d / 1000000000), d % 1000000000 }' >want
cut -d' ' -f2 "$T/out" >got
expect_same "DELTA = time since the previous event" want got
expect_rc 0 "--relative --delta" "$PTLOG" dump --relative --delta small.ptl
cut -d' ' -f2 "$T/out" >got2
expect_same "--relative does not change DELTA" got got2
# Relative to the previous event printed, after selection.
expect_rc 0 "--delta --event alloc" "$PTLOG" dump --relative --delta --event alloc small.ptl
printf '%s\n' '0.000002400 +0.000000000 4242 0x7f8d8242c740 alloc 0010000000000000' \
    '1.249999900 +1.249997500 4343 0x7f6e2901c1c7 alloc [truncated:record] "AAAA"' >want
expect_same "--delta after selection" want "$T/out"
expect_rc 0 "--delta --begin (seek)" "$PTLOG" dump --delta --begin 2024-05-01T12:00:01Z --limit 1 small.ptl
grep -q '^2024-05-01T12:00:01.000000000Z +0.000000000 4343 ' "$T/out" && ok || bad "--delta after a seek: $(cat "$T/out")"
# Timestamps that go backwards (a log may hold them): a negative DELTA.
printf '{"ts":10,"id":1}\n{"ts":5,"id":1}\n{"ts":2000000007,"id":1}\n' >back.jsonl
expect_rc 0 "--delta backwards" "$PTLOG" dump --relative --delta back.jsonl
printf '%s\n' '0.000000000 +0.000000000 0 0x0 event#1' '-0.000000005 -0.000000005 0 0x0 event#1' \
    '1.999999997 +2.000000002 0 0x0 event#1' >want
expect_same "negative delta" want "$T/out"
run "$PTLOG" dump --delta --color=always small.ptl
sed 's/\x1b\[[0-9;]*m//g' "$T/out" >plain
"$PTLOG" dump --delta small.ptl >want
expect_same "--delta in colour is the same text" want plain
run bash -c "cat small.ptl | '$PTLOG' dump --delta -"
expect_same "--delta from a pipe" want "$T/out"

# ---- info --threads ----------------------------------------------------------------------------
expect_rc 0 "info --threads" "$PTLOG" info --threads small.ptl
sed -n '/^threads:/,$p' "$T/out" >got
golden info_threads.txt got
sed '/^$/,$d' "$T/out" >head
sed '/^$/,$d' "$GOLD/info.txt" >want
expect_same "info --threads keeps the summary" want head

# Counts, first and last times from the dump, for a log of many chunks and 15 threads.
make_many many 30000
expect_rc 0 "info --threads --json" "$PTLOG" info --threads --json many.ptl
cp "$T/out" many.info.json
"$PTLOG" convert many.ptl --to jsonl -o many.out.jsonl
if command -v python3 >/dev/null; then
    python3 - <<'PY' && ok || bad "info --threads --json: counts or times differ from the events"
import json
info = json.load(open("many.info.json"))
want = {}
for line in open("many.out.jsonl"):
    e = json.loads(line)
    if "ts" not in e:
        continue
    k = (e["pid"], e["tid"])
    c, first, last = want.get(k, (0, e["ts"], e["ts"]))
    want[k] = (c + 1, min(first, e["ts"]), max(last, e["ts"]))
got = {(t["pid"], t["tid"]): (t["count"], t["first_ts"], t["last_ts"]) for t in info["threads"]}
assert got == want, (len(got), len(want))
assert len(got) == 15 and sum(c for c, _, _ in got.values()) == info["events"] == 30000
assert all(t["span_ns"] == t["last_ts"] - t["first_ts"] for t in info["threads"])
order = [(t["pid"], t["first_ts"], t["tid"]) for t in info["threads"]]
assert order == sorted(order), "not sorted by pid, first time, tid"
PY
fi
run bash -c "cat many.ptl | '$PTLOG' info --threads -"
sed -n '/^threads:/,$p' "$T/out" >pipe.txt
"$PTLOG" info --threads many.ptl | sed -n '/^threads:/,$p' >file.txt
expect_same "info --threads from a pipe" file.txt pipe.txt
n=$(($(wc -l <file.txt) - 2))
[ "$n" = 15 ] && ok || bad "info --threads: $n rows, want 15"
expect_rc 0 "info without --threads" "$PTLOG" info --json many.ptl
grep -q '"threads"' "$T/out" && bad "threads listed without --threads" || ok
expect_rc 2 "--quick --threads" "$PTLOG" info --quick --threads many.ptl
expect_err "--threads needs the pass over the events that --quick skips" "--quick --threads"

finish
