#!/bin/bash
# ptlog filter (a new .ptl with the selected events, same attributes and types)
# and ptlog merge (timestamp order, types unified by name, ids remapped).
. "$(dirname "$0")/ptlog/lib.sh"
make_small
"$PTLOG" dump small.ptl >small.txt

expect_rc 0 "filter" "$PTLOG" filter small.ptl --event 'request:*' --pid 4242 -o f.ptl
"$PTLOG" dump f.ptl >got
grep -E ' 4242 .* request:' small.txt >want
expect_same "filter keeps the selected events" want got
"$PTLOG" convert small.ptl --to json | sed -n '1,2p' >want
"$PTLOG" convert f.ptl --to json | sed -n '1,2p' >got
expect_same "filter keeps attributes and the whole type table" want got
run bash -c "cat small.ptl | '$PTLOG' filter - --no-system -o - | '$PTLOG' dump -"
grep -v posix_trace_ small.txt >want
expect_same "filter through pipes" want "$T/out"
expect_rc 2 "filter without -o" "$PTLOG" filter small.ptl
expect_err "missing -o OUT" "filter without -o"
expect_rc 3 "filter missing input" "$PTLOG" filter nosuch.ptl -o f2.ptl
[ -e f2.ptl ] && bad "filter left an output for a missing input" || ok

# Merge: two logs whose ids clash (id 1 is "tick" in one and "tock" in the other).
cat >a.jsonl <<'J'
{"attributes":{"trace_name":"a"},"event_types":[{"id":1,"name":"tick"},{"id":2,"name":"only_a"}]}
{"id":1,"ts":10,"pid":1,"data":"61"}
{"id":1,"ts":30,"pid":1,"data":"62"}
{"id":1,"ts":50,"pid":1}
J
cat >b.jsonl <<'J'
{"attributes":{"trace_name":"b"},"event_types":[{"id":1,"name":"tock"},{"id":3,"name":"tick"}]}
{"id":1,"ts":20,"pid":2}
{"id":3,"ts":30,"pid":2}
{"id":1,"ts":40,"pid":2}
J
"$PTLOG" convert a.jsonl --to ptl -o a.ptl && "$PTLOG" convert b.jsonl --to ptl -o b.ptl
expect_rc 0 "merge" "$PTLOG" merge a.ptl b.ptl -o m.ptl
"$PTLOG" dump --relative m.ptl >got
cat >want <<'W'
0.000000000 1 0x0 tick "a"
0.000000010 2 0x0 tock
0.000000020 1 0x0 tick "b"
0.000000020 2 0x0 tick
0.000000030 2 0x0 tock
0.000000040 1 0x0 tick
W
expect_same "merge: timestamp order, ties by input order, names unified" want got
"$PTLOG" convert m.ptl --to json >m.json
grep -q '"trace_name":"a"' m.json && ok || bad "merge: attributes not from the first input"
grep -q '"event_types":\[{"id":1,"name":"tick"},{"id":2,"name":"only_a"},{"id":3,"name":"tock"}\]' m.json && ok ||
    bad "merge: type table $(grep event_types m.json)"
run bash -c "cat b.ptl | '$PTLOG' merge a.ptl - -o - | '$PTLOG' dump --relative -"
expect_same "merge with standard input" want "$T/out"
expect_rc 0 "merge of JSON Lines inputs" "$PTLOG" merge a.jsonl b.jsonl -o m2.ptl
"$PTLOG" dump --relative m2.ptl >got2
expect_same "merge reads any input format" want got2
expect_rc 2 "merge twice stdin" "$PTLOG" merge - - -o x.ptl
expect_rc 2 "merge without -o" "$PTLOG" merge a.ptl b.ptl
expect_rc 3 "merge with a bad input" "$PTLOG" merge a.ptl nosuch.ptl -o m3.ptl
[ -e m3.ptl ] && bad "merge left a partial output" || ok

# Damaged input: merged with loss, exit 1.
make_many many 30000
size=$(stat -c %s many.ptl)
head -c $((size - 100)) many.ptl >cut.ptl
expect_rc 1 "merge of a cut log" "$PTLOG" merge cut.ptl a.ptl -o m4.ptl
[ -s m4.ptl ] && ok || bad "merge with loss wrote nothing"

finish
