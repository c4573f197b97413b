#!/bin/bash
# ptlog merge orders the events of interleaved inputs by timestamp: four
# inputs of many chunks each, with overlapping time ranges, equal timestamps
# within and across inputs, one input much shorter and one empty. Every
# event comes out exactly once, by timestamp, ties in input order (command
# line) and then in the order of their input.
. "$(dirname "$0")/ptlog/lib.sh"

# gen K N SEED: input K of N events; timestamps rise by 0..4 ns at random (so repeat),
# pid = K, tid = position in the input.
gen() {
    awk -v k="$1" -v n="$2" -v seed="$3" 'BEGIN {
        srand(seed)
        print "{\"attributes\":{\"trace_name\":\"in" k "\"},\"event_types\":[{\"id\":1,\"name\":\"e" k "\"}]}"
        ts = int(rand() * 50) # nanoseconds after 2024-05-01T12:00:00Z (awk integers stay small)
        for (i = 0; i < n; i++) {
            printf "{\"id\":1,\"ts\":1714564800%09d,\"pid\":%d,\"tid\":%d,\"data\":\"%08x%08x%08x\"}\n", ts, k, i, i, k, i * 7919
            ts += int(rand() * 5)
        }
    }' >"in$1.jsonl"
    "$PTLOG" convert "in$1.jsonl" --to ptl -o "in$1.ptl" || bad "cannot build in$1.ptl"
}
gen 1 25000 11
gen 2 25000 22
gen 3 300 33
gen 4 0 44
gen 5 25000 55

# "ts pid tid" of each event of a JSON Lines file.
keys() {
    sed -n 's/.*"ts":\([0-9]*\),"pid":\([0-9]*\),"tid":\([0-9]*\).*/\1 \2 \3/p' "$1"
}
for k in 1 2 3 4 5; do keys "in$k.jsonl"; done | sort -s -n -k1,1 -k2,2 -k3,3 >want
[ "$(cut -d' ' -f1 want | uniq -d | wc -l)" -gt 1000 ] && ok || bad "the inputs have too few equal timestamps"

expect_rc 0 "merge of five inputs" "$PTLOG" merge in1.ptl in2.ptl in3.ptl in4.ptl in5.ptl -o m.ptl
"$PTLOG" convert m.ptl --to jsonl -o m.jsonl
keys m.jsonl >got
n=$(wc -l <got)
[ "$n" = 75300 ] && ok || bad "merge: $n events, want 75300"
expect_same "merge: by timestamp, ties in input order" want got
sort -s -n -c -k1,1 got 2>/dev/null && ok || bad "merge output not sorted by timestamp"
chunks=$("$PTLOG" info --json in1.ptl | sed -n 's/.*"chunks":\([0-9]*\).*/\1/p')
[ "${chunks:-0}" -gt 2 ] && ok || bad "inputs of one chunk only ($chunks): the test would not cross chunks"

# Input order decides ties: the same inputs in another order.
for k in 1 2 3 4 5; do keys "in$k.jsonl"; done | sort -s -n -k1,1 -k2,2r -k3,3 >want_rev
expect_rc 0 "merge, inputs reversed" "$PTLOG" merge in5.ptl in4.ptl in3.ptl in2.ptl in1.ptl -o r.ptl
"$PTLOG" convert r.ptl --to jsonl -o r.jsonl
keys r.jsonl >got
expect_same "merge: ties follow the command line" want_rev got

# The same through pipes and mixed formats.
run bash -c "cat in2.ptl | '$PTLOG' merge in1.jsonl - in3.ptl in4.jsonl in5.jsonl -o - | '$PTLOG' convert - --to jsonl"
keys "$T/out" >got
expect_same "merge: standard input and JSON Lines inputs" want got

# merge is a source: any output format, and the event selection of filter.
expect_rc 0 "merge --to jsonl" "$PTLOG" merge in1.ptl in2.ptl in3.ptl in4.ptl in5.ptl --to jsonl -o mj.jsonl
keys mj.jsonl >got
expect_same "merge --to jsonl: the same events as merge then convert" want got
run "$PTLOG" merge in1.ptl in5.ptl --to jsonl
keys "$T/out" >got
for k in 1 5; do keys "in$k.jsonl"; done | sort -s -n -k1,1 -k2,2 -k3,3 >want15
expect_same "merge --to jsonl without -o writes standard output" want15 got
expect_rc 0 "merge --event" "$PTLOG" merge in1.ptl in2.ptl in3.ptl --event e2 -o sel.ptl
"$PTLOG" convert sel.ptl --to jsonl -o sel.jsonl
keys in2.jsonl >want2
keys sel.jsonl >got
expect_same "merge --event e2: only input 2's events" want2 got
expect_rc 2 "merge --to ptl without -o" "$PTLOG" merge in1.ptl in2.ptl --to ptl

# A schema one input names after its type's events, none in the other (a review): checked once the
# inputs are read whole: exit 3 and no output, as when it comes first.
printf '{"ts":1,"id":40,"name":"x","data":"01000000"}\n{"ts":3,"id":40,"name":"x","data":"03000000"}\n{"status":{},"event_types":[{"id":40,"name":"x","schema":"u32 a"}]}\n' >late.jsonl
printf '{"ts":2,"id":40,"name":"x","data":"ffff"}\n' >none.jsonl
rm -f late-merge.ptl
expect_rc 3 "merge, a schema named late in one input" "$PTLOG" merge late.jsonl none.jsonl -o late-merge.ptl
expect_err 'event type "x" has schema none here but "u32 a" in late.jsonl' "merge, late schema: message"
[ ! -e late-merge.ptl ] && ok || bad "merge, late schema: an output was written"

finish
