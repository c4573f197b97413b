#!/bin/bash
# ptlog convert: golden JSON, JSON Lines and Chrome outputs; exact round trips
# ptl -> json -> ptl and ptl -> jsonl -> ptl; format detection; standard
# input and output; bad JSON with file:line:column; bad values with the event
# index and key; atomic output (no partial file on error).
. "$(dirname "$0")/ptlog/lib.sh"
make_small
"$PTLOG" dump small.ptl >small.txt

for f in json jsonl chrome; do
    expect_rc 0 "convert --to $f" "$PTLOG" convert small.ptl --to $f
    golden "small.$f" "$T/out"
done
if command -v python3 >/dev/null; then
    python3 - "$GOLD/small.chrome" <<'PY' && ok || bad "chrome output is not valid Chrome trace JSON"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
phs = [e["ph"] for e in ev]
assert phs.count("B") == 1 and phs.count("E") == 1 and "M" in phs
assert all(e["name"] == "request" for e in ev if e["ph"] in "BE")
PY
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$GOLD/small.jsonl" && ok || bad "jsonl invalid"
fi

# Round trips are exact (dump text identical), also through pipes.
for f in json jsonl; do
    expect_rc 0 "ptl -> $f" "$PTLOG" convert small.ptl --to $f -o "rt.$f"
    expect_rc 0 "$f -> ptl" "$PTLOG" convert "rt.$f" --to ptl -o "rt.$f.ptl"
    "$PTLOG" dump "rt.$f.ptl" >rt.txt
    expect_same "round trip through $f" small.txt rt.txt
    "$PTLOG" convert "rt.$f.ptl" --to $f -o "rt2.$f"
    expect_same "$f -> ptl -> $f is stable" "rt.$f" "rt2.$f"
done
make_many many 30000
"$PTLOG" dump many.ptl >many.txt
run bash -c "cat many.ptl | '$PTLOG' convert - --to jsonl -o - | '$PTLOG' convert - --to ptl -o - | '$PTLOG' dump -"
expect_same "pipe round trip of a multi-chunk log" many.txt "$T/out"
run bash -c "cat many.ptl | '$PTLOG' convert - --to json | '$PTLOG' convert --from json - --to ptl -o back.ptl"
[ "$RC" = 0 ] && ok || bad "json from a pipe: exit $RC $(cat "$T/err")"
"$PTLOG" dump back.ptl >back.txt
expect_same "pipe round trip through json" many.txt back.txt

# Detection: a one-line JSON document is still a document.
printf '{"events":[{"name":"a","ts":5},{"name":"b","ts":6,"data":"00"}]}' >oneline.json
expect_rc 0 "one-line document" "$PTLOG" dump --relative oneline.json
printf '0.000000000 0 0x0 a\n0.000000001 0 0x0 b 00\n' >want
expect_same "events without ids get ids by name" want "$T/out"

# ... also when its "events" come after the 4 KiB detection looks at (200 event types before them,
# as in `jq -c` of a log with many types): read as JSON Lines, its events were dropped with exit 0.
{ printf '{"attributes":{"trace_name":"wide"},"event_types":['
  for i in $(seq 100 299); do printf '{"id":%d,"name":"t%d"},' "$i" "$i"; done
  printf '{"id":300,"name":"last"}],"events":[{"id":100,"ts":5},{"id":300,"ts":6,"data":"00"}]}\n'; } >wide1.json
expect_rc 0 "one-line document, events past 4 KiB" "$PTLOG" dump --relative wide1.json
printf '0.000000000 0 0x0 t100\n0.000000001 0 0x0 last 00\n' >want
expect_same "one-line document, events past 4 KiB: its events" want "$T/out"
printf '{"attributes":{"trace_name":"bad"},"event_types":[%s{"id":1,"name":"x"}],"events":{}}\n' \
    "$(for i in $(seq 100 299); do printf '{"id":%d,"name":"t%d"},' "$i" "$i"; done)" >wide2.json
expect_rc 3 "one-line document, events not an array" "$PTLOG" dump wide2.json
expect_err "wide2.json:1:[0-9]+: expected '\\[' \\(the events array\\)" "events not an array: message"
# ... and read as a document, value by value: 200,000 events on that line are no line too large.
{ printf '{"attributes":{"trace_name":"wide"},"event_types":['
  for i in $(seq 100 299); do printf '{"id":%d,"name":"t%d"},' "$i" "$i"; done
  printf '{"id":300,"name":"last"}],"events":['
  seq 1 200000 | sed 's/.*/{"id":100,"ts":&},/' | tr -d '\n'
  printf '{"id":300,"ts":999999}]}\n'; } >wide3.json
expect_rc 0 "one-line document of 200,000 events past 4 KiB" "$PTLOG" dump wide3.json
[ "$(wc -l <"$T/out")" = 200001 ] && ok || bad "one-line document of 200,000 events: $(wc -l <"$T/out") lines"
# ... but a string "events" that is a value, not a key, is no document (a review): JSON Lines whose first
# event is of a type named "events" was read as a document and refused, with --from jsonl too. A key
# followed by blanks and a newline before its ':' is still one, and --from jsonl of a one-line
# document still reads its events (no JSON Lines line has an "events" key).
printf '%s\n' '{"name":"events","id":33,"ts":2}' '{"name":"events","id":33,"ts":3}' >named-events.jsonl
expect_rc 0 "JSON Lines, a type named events" "$PTLOG" dump --relative named-events.jsonl
[ "$(grep -c ' events$' "$T/out")" = 2 ] && ok || bad "a type named events: $(cat "$T/out")"
expect_rc 0 "JSON Lines asked, a type named events" "$PTLOG" dump --from jsonl named-events.jsonl
{ printf '{"attributes":{"trace_name":"wide"},"event_types":['
  for i in $(seq 100 299); do printf '{"id":%d,"name":"t%d"},' "$i" "$i"; done
  printf '{"id":300,"name":"last"}],"events"  \n  :[{"id":100,"ts":5},{"id":300,"ts":6}]}\n'; } >split-key.json
expect_rc 0 "a document, \"events\" and its ':' on two lines" "$PTLOG" dump split-key.json
[ "$(wc -l <"$T/out")" = 2 ] && ok || bad "\"events\" and its ':' on two lines: $(wc -l <"$T/out") events"
expect_rc 0 "--from jsonl of a one-line document" "$PTLOG" dump --from jsonl wide1.json
[ "$(wc -l <"$T/out")" = 2 ] && ok || bad "--from jsonl of a one-line document: $(wc -l <"$T/out") events"
# ... and when that line is longer than a JSON Lines line may be (64 MiB: the limit binds the
# document's values, not its line): 300,000 events of 100 payload bytes, 72 MB, were refused.
{ printf '{"attributes":{"trace_name":"wide"},"event_types":['
  for i in $(seq 100 299); do printf '{"id":%d,"name":"t%d"},' "$i" "$i"; done
  printf '{"id":300,"name":"last"}],"events":['
  awk 'BEGIN { d = sprintf("%0200d", 7); for (i = 1; i <= 300000; i++) printf "{\"id\":100,\"ts\":%d,\"data\":\"%s\"},", i, d }'
  printf '{"id":300,"ts":999999999}]}\n'; } >wide4.json
expect_rc 0 "one-line document of 72 MB" "$PTLOG" convert wide4.json --to ptl -o wide4.ptl
[ "$("$PTLOG" info wide4.ptl | sed -n 's/^events: *\([0-9]*\).*/\1/p')" = 300001 ] && ok ||
    bad "one-line document of 72 MB: $("$PTLOG" info wide4.ptl | grep -m1 '^events')"
rm -f wide4.json wide4.ptl

# Documents are streamed: keys in any order except attributes before events.
cat >order.json <<'J'
{"extra": {"ignored": [1, 2]},
 "attributes": {"trace_name": "order"},
 "events": [
   {"name": "b\u0041", "ts": 7},
   {"ts": 9, "id": 3, "data": "00ff"}
 ],
 "event_types": [{"id": 3, "name": "three"}],
 "status": {"events_recorded": 2}}
J
expect_rc 0 "keys after events" "$PTLOG" convert order.json --to jsonl
grep -q '"event_types":\[{"id":0,"name":"bA"},{"id":3,"name":"three"}\]' "$T/out" && ok || bad "order.json types: $(tail -1 "$T/out")"
grep -q '"events_recorded":2' "$T/out" && ok || bad "order.json status after the events"
printf '{"events":[{"ts":1,"id":1}],\n"attributes":{}}\n' >late.json
expect_rc 3 "attributes after events" "$PTLOG" convert late.json --to jsonl
expect_err '"attributes" must come before "events"' "attributes after events"
printf '{"events":[{"ts":1,"id":1}]} x\n' >trailing.json
expect_rc 3 "data after the document" "$PTLOG" convert trailing.json --to jsonl
expect_err '^ptlog: trailing.json:1:30: unexpected data after the JSON document$' "data after the document"
printf '{"events":[{"ts":1,"id":1},\n{"ts":2,' >cut.json
expect_rc 3 "document cut short" "$PTLOG" convert cut.json --to jsonl -o cut.out
expect_err '^ptlog: cut.json:2:[0-9]+: ' "document cut short"
[ -e cut.out ] && bad "output left for a cut document" || ok
printf '{"events":[{"ts":1,"id":1}],"events":[]}' >dup.json
expect_rc 3 "duplicate key" "$PTLOG" convert dup.json --to jsonl
expect_err 'duplicate key' "duplicate key"

# JSON Lines events in ptlog's own key order (json_in.c's own_object), in another, with
# blanks, and with keys left out (fast_object, key by key) give the same log; a key
# repeated where ptlog's order expects the next one is refused.
hdr='{"format":{"schema":"tracelog","version":1},"event_types":[{"id":1,"name":"a"}]}'
{
    echo "$hdr"
    echo '{"name":"a","id":1,"ts":10,"pid":7,"tid":8,"ktid":9,"tname":"w","address":4,"truncation":0,"data":"0102","fields":{},"fields_size":null}'
    echo '{"name":"a","id":1,"ts":11,"pid":7,"tid":8,"address":4,"truncation":0,"data":"03"}'
} >ordered.jsonl
{
    echo "$hdr"
    echo '{"data":"0102","tname":"w","truncation":0,"address":4,"ktid":9,"tid":8,"pid":7,"ts":10,"id":1,"name":"a"}'
    echo '{ "name" : "a", "id" : 1, "ts" : 11, "pid" : 7, "tid" : 8, "address" : 4, "truncation" : 0, "data" : "03" }'
} >shuffled.jsonl
expect_rc 0 "ptlog's key order" "$PTLOG" convert ordered.jsonl --to ptl -o ordered.ptl
expect_rc 0 "another key order" "$PTLOG" convert shuffled.jsonl --to ptl -o shuffled.ptl
"$PTLOG" dump ordered.ptl >ordered.txt
"$PTLOG" dump shuffled.ptl >shuffled.txt
expect_same "key order does not matter" ordered.txt shuffled.txt
grep -q '^.* 7 0x8 tid 9 (w) a 0102$' ordered.txt && ok || bad "ordered.jsonl's first event: $(head -1 ordered.txt)"
{
    echo "$hdr"
    echo '{"name":"a","id":1,"ts":10,"ts":11,"pid":7,"tid":8,"address":4,"truncation":0,"data":""}'
} >repeated.jsonl
expect_rc 3 "a key repeated in ptlog's order" "$PTLOG" convert repeated.jsonl --to ptl -o repeated.ptl
expect_err 'duplicate' "a key repeated in ptlog's order"

# Selection applies to convert too.
expect_rc 0 "convert with --event" "$PTLOG" convert small.ptl --to jsonl --event alloc
n=$(grep -c '"ts"' "$T/out")
[ "$n" = 2 ] && ok || bad "convert --event alloc kept $n events"

# Malformed JSON: file:line:column, exit 3, no output file.
printf '{"ts":1,"id":1}\n{"ts":2,"id":1,}\n' >syntax.jsonl
expect_rc 3 "syntax error jsonl" "$PTLOG" convert syntax.jsonl --to ptl -o out.ptl
expect_err '^ptlog: syntax.jsonl:2:16: ' "jsonl syntax error position"
[ -e out.ptl ] && bad "partial output left after a syntax error" || ok
ls out.ptl.tmp.* >/dev/null 2>&1 && bad "temporary file left behind" || ok
# A line cut short in the middle of a file: "end of the line" (jansson sees the line alone, and said
# "end of file"); a NUL byte, anywhere: refused where it is (a NUL after a number was taken for a blank).
printf '{"ts":1,"id":1}\n{"ts":2,"id":1\n{"ts":3,"id":1}\n' >cutline.jsonl
expect_rc 3 "a line cut short" "$PTLOG" dump cutline.jsonl
expect_err "^ptlog: cutline.jsonl:2:14: '}' expected near end of the line$" "a line cut short: message"
printf '{"ts":1,"id":1}\n{"ts":2\0,"id":1}\n' >nul.jsonl
expect_rc 3 "a NUL byte after a number" "$PTLOG" dump nul.jsonl
expect_err '^ptlog: nul.jsonl:2:8: a NUL byte \(JSON text has none\)$' "a NUL byte: message"
printf '{"events":[{"ts":1,"id":1},\n{"ts":2\0}]}\n' >nul.json
expect_rc 3 "a NUL byte in a document" "$PTLOG" dump nul.json
expect_err '^ptlog: nul.json:2:8: a NUL byte \(JSON text has none\)$' "a NUL byte in a document: message"
printf '{"events":[\n{"ts":1,"id":1},\n{"ts":3 "id":1}]}\n' >syntax.json
expect_rc 3 "syntax error json" "$PTLOG" convert syntax.json --to jsonl -o out.jsonl
expect_err '^ptlog: syntax.json:3:[0-9]+: ' "json syntax error position"
[ -e out.jsonl ] && bad "partial output after a json syntax error" || ok

# Invalid values: event index and key.
printf '{"ts":1,"id":1}\n{"ts":2,"id":1}\n{"ts":-3,"id":1}\n' >neg.jsonl
expect_rc 3 "negative ts" "$PTLOG" convert neg.jsonl --to ptl -o out.ptl
expect_err '^ptlog: neg.jsonl:3: event 2: key "ts": expected integer nanoseconds since the epoch, or "SECONDS.NNNNNNNNN"$' "negative ts"
printf '{"events":[{"ts":1,"id":1},{"ts":2,"id":1,"data":"abc"}]}\n' >odd.json
expect_rc 3 "odd hex" "$PTLOG" convert odd.json --to jsonl
expect_err '^ptlog: odd.json: event 1: key "data": expected a string of hex digit pairs$' "odd hex"
printf '{"events":[{"ts":1,"id":1,"pid":4294967296}]}\n' >pid.json
expect_rc 3 "pid too big" "$PTLOG" convert pid.json --to jsonl
expect_err 'event 0: key "pid": expected a non-negative integer below 2\^32' "pid too big"
printf '{"events":[{"ts":1,"id":1,"truncation":3}]}\n' >trunc.json
expect_rc 3 "bad truncation" "$PTLOG" convert trunc.json --to jsonl
expect_err 'event 0: key "truncation": expected 0' "bad truncation"
printf '{"events":[{"ts":1,"id":1,"name":"a"},{"ts":2,"id":1,"name":"b"}]}\n' >clash.json
expect_rc 3 "id named twice" "$PTLOG" convert clash.json --to jsonl
expect_err 'event 1: key "name": event type 1 is named both "a" and "b"' "id named twice"
printf '{"format":{"schema":"tracelog","version":2},"events":[]}\n' >v2.json
expect_rc 3 "schema version 2" "$PTLOG" convert v2.json --to jsonl
expect_err 'unsupported JSON schema version' "schema version 2"
printf '{"attributes":{"trace_name":5},"events":[]}\n' >attr.json
expect_rc 3 "bad attribute" "$PTLOG" convert attr.json --to jsonl
expect_err '^ptlog: attr.json: key "attributes.trace_name": expected a string$' "bad attribute"

# Values above INT64_MAX travel as "0x..." strings and come back exactly.
printf '{"ts":1,"id":1,"tid":"0xffffffffffffffff","address":"0x8000000000000000"}\n' >big.jsonl
expect_rc 0 "big u64 in" "$PTLOG" convert big.jsonl --to ptl -o big.ptl
expect_rc 0 "big u64 out" "$PTLOG" convert big.ptl --to jsonl
grep -q '"tid":"0xffffffffffffffff","address":"0x8000000000000000"' "$T/out" && ok || bad "u64 above INT64_MAX: $(cat "$T/out")"

# Output errors: exit 4, nothing left behind; an existing file is kept intact.
expect_rc 4 "output in a missing directory" "$PTLOG" convert small.ptl --to json -o nodir/x.json
expect_err '^ptlog: nodir/x.json: cannot create the output: No such file or directory$' "missing directory"
echo precious >keep.json
mkdir ro && chmod 555 ro
if [ "$(id -u)" != 0 ]; then
    expect_rc 4 "read-only directory" "$PTLOG" convert small.ptl --to json -o ro/x.json
fi
expect_rc 4 "output is a directory" "$PTLOG" convert small.ptl --to json -o ro
if [ -w /dev/full ] && [ -c /dev/full ]; then
    expect_rc 4 "disk full" "$PTLOG" convert small.ptl --to jsonl -o /dev/full
    expect_err '^ptlog: /dev/full: cannot write the output: No space left on device$' "disk full"
    [ -c /dev/full ] && ok || bad "/dev/full was replaced"
fi
expect_rc 3 "bad input keeps the old output" "$PTLOG" convert neg.jsonl --to json -o keep.json
[ "$(cat keep.json)" = precious ] && ok || bad "a failed convert changed the existing output"
expect_rc 0 "good convert replaces it" "$PTLOG" convert small.ptl --to json -o keep.json
expect_same "replaced atomically" "$GOLD/small.json" keep.json
ls ./*.tmp.* >/dev/null 2>&1 && bad "temporary files left: $(ls ./*.tmp.*)" || ok

# Usage errors.
expect_rc 2 "no --to" "$PTLOG" convert small.ptl
expect_err "missing --to FORMAT" "no --to"
# The fast JSON paths (8 digits and 8 string bytes at a time) read what jansson reads: integers of
# 1 to 19 digits, with a non-digit at every position after them; names with an escape or a
# non-ASCII byte at every position around the 8-byte steps; hex strings for tid.
if command -v python3 >/dev/null; then
    python3 - >fast.jsonl <<'PY'
import json
for n in range(1, 20):
    v = int("9123456789012345678"[:n])
    name = "n" * n
    esc = "e" * (n - 1) + '\\"x' + "e" * (20 - n)
    print('{"ts":%d,"pid":%d,"tid":"0x%X","address":%d,"name":"%s"}' % (v, v % 4294967296, v, v, name))
    print('{"ts":%d, "name":"%s","data":"%s"}' % (v, esc, "aB" * n))
    print(json.dumps({"ts": v, "name": "u" * n + "\u00e9" + "u" * (19 - n), "tid": v}, ensure_ascii=False))
PY
    expect_rc 0 "fast paths: jsonl -> ptl" "$PTLOG" convert fast.jsonl --to ptl -o fast.ptl
    expect_rc 0 "fast paths: ptl -> jsonl" "$PTLOG" convert fast.ptl --to jsonl -o fast.out.jsonl
    python3 - fast.jsonl fast.out.jsonl <<'PY' && ok || bad "fast paths: values differ after the round trip"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2])][1:-1]
assert len(got) == len(want), (len(got), len(want))
for w, g in zip(want, got):
    for k in ("ts", "pid", "address", "name", "data"):
        if k in w:
            assert g[k] == w[k].lower() if k == "data" else g[k] == w[k], (k, w, g)
    if "tid" in w:
        t = w["tid"]
        assert g["tid"] == (int(t, 16) if isinstance(t, str) else t), (w, g)
PY
    # Above INT64_MAX a JSON integer is refused (jansson's limit) on both paths: the fast one
    # accepted it, the same line with a non-ASCII name was refused.
    printf '{"ts":1,"name":"a"}\n{"ts":9300000000000000000,"name":"a"}\n' >big.jsonl
    expect_rc 3 "integer above INT64_MAX, ASCII line" "$PTLOG" convert big.jsonl --to ptl -o big.ptl
    printf '{"ts":1,"name":"a"}\n{"ts":9300000000000000000,"name":"\xc3\xa9"}\n' >big.jsonl
    expect_rc 3 "integer above INT64_MAX, non-ASCII line" "$PTLOG" convert big.jsonl --to ptl -o big.ptl
fi
# A line of ptlog's own is read in place before its end is known: a newline inside its "fields" (a blank
# to JSON) still ends the line there, as for any other line (the fast path had read on past it).
"$PTLOG" convert small.ptl --to jsonl -o own.jsonl
awk 'NR == 2 { sub(/"fields":\{/, "\"fields\":{\n") } { print }' own.jsonl >own-nl.jsonl
if cmp -s own.jsonl own-nl.jsonl; then
    bad "own-nl.jsonl: no \"fields\" on line 2 to split"
else
    expect_rc 3 "newline inside an own line's fields" "$PTLOG" convert own-nl.jsonl --to ptl -o own-nl.ptl
    expect_err '^ptlog: own-nl.jsonl:2:[0-9]+: ' "newline inside an own line's fields"
fi

expect_rc 2 "bad --to" "$PTLOG" convert small.ptl --to xml
expect_err "--to: unknown format 'xml'" "bad --to"
expect_rc 2 "chrome input" "$PTLOG" convert small.ptl --from chrome --to json
expect_rc 3 "json input read as ptl" "$PTLOG" convert --from ptl "$GOLD/small.in.jsonl" --to json

# Schemas named after their type's first event (a review): a JSON document whose "event_types" follow
# its "events" (what ptlog writes for a log read from a pipe) lost them in .ptl output, with exit 0.
printf '{"events":[{"ts":1,"id":40,"name":"x","data":"01000000"}],"event_types":[{"id":40,"name":"x","schema":"u32 a"}]}\n' >late.json
expect_rc 0 "late schema to ptl" "$PTLOG" convert late.json --to ptl -o late.ptl
"$PTLOG" dump late.ptl >"$T/out"
grep -q ' x { a = 1 }$' "$T/out" && ok || bad "late schema: the .ptl lost it: $(cat "$T/out")"
typed=$TL_BUILD_DIR/samples/typed
if [ -x "$typed" ]; then
    "$typed" typed-app.ptl >/dev/null && "$PTLOG" convert typed-app.ptl --to ptl -o typed-src.ptl
    cat typed-src.ptl | "$PTLOG" convert - --to json >typed-pipe.json
    grep -q '"events".*' typed-pipe.json && ok || bad "the typed log's JSON has no events"
    expect_rc 0 "typed JSON from a pipe, back to ptl" "$PTLOG" convert typed-pipe.json --to ptl -o typed-back.ptl
    "$PTLOG" dump typed-src.ptl >typed-src.txt && "$PTLOG" dump typed-back.ptl >typed-back.txt
    expect_same "typed log through a pipe's JSON and back" typed-src.txt typed-back.txt
fi
# A schema that changes after its type's first event (JSON Lines status lines): a .ptl log gives a
# type one schema, so the conversion cannot be exact: exit 3, nothing written.
{ echo '{"attributes":{"trace_name":"t"},"event_types":[{"id":40,"name":"x","schema":"u32 a"}]}'
  echo '{"ts":1,"id":40,"data":"01000000"}'
  echo '{"status":{},"event_types":[{"id":40,"name":"x","schema":"u64 a"}]}'
  echo '{"ts":2,"id":40,"data":"0300000000000000"}'; } >change.jsonl
expect_rc 3 "schema changed mid-way, to ptl" "$PTLOG" convert change.jsonl --to ptl -o change.ptl
expect_err '^ptlog: change.jsonl: event type "x" \(id 40\): its schema or name changed after its first event' \
    "schema changed mid-way: message"
[ ! -e change.ptl ] && ok || bad "schema changed mid-way: an output was written"
# ... while dump reads each event with the schema of its time, and --where takes a field that a schema
# of the stream had: it was refused (exit 2) when the last schema had it no more.
{ echo '{"attributes":{},"event_types":[{"id":40,"name":"x","schema":"u32 a"}]}'
  echo '{"ts":1,"id":40,"data":"05000000"}'
  echo '{"status":{},"event_types":[{"id":40,"name":"x","schema":"u32 a; u8 b"}]}'
  echo '{"ts":2,"id":40,"data":"0700000001000000"}'
  echo '{"status":{},"event_types":[{"id":40,"name":"x","schema":"char[4] a"}]}'
  echo '{"ts":3,"id":40,"data":"41424344"}'; } >changes.jsonl
expect_rc 0 "--where on a field of an earlier schema" "$PTLOG" dump --where 'b == 1' changes.jsonl
grep -qx '.* x { a = 7, b = 1 }' "$T/out" && [ "$(wc -l <"$T/out")" = 1 ] && ok || bad "--where b == 1: $(cat "$T/out")"
expect_rc 2 "--where on a field no schema had" "$PTLOG" dump --where 'zz == 1' changes.jsonl
# ... and a value an earlier schema had (an enum's name a later status line changed): it was exit 2
{ echo '{"attributes":{},"event_types":[{"id":40,"name":"x","schema":"enum8 state {IDLE=0, BUSY=1}"}]}'
  echo '{"ts":1,"id":40,"data":"01"}'
  echo '{"status":{},"event_types":[{"id":40,"name":"x","schema":"enum8 state {IDLE=0, READY=1}"}]}'
  echo '{"ts":2,"id":40,"data":"01"}'; } >enum-change.jsonl
expect_rc 0 "--where on a value of an earlier schema" "$PTLOG" dump --where 'state == BUSY' enum-change.jsonl
grep -q 'x { state = BUSY }$' "$T/out" && [ "$(wc -l <"$T/out")" = 1 ] && ok || bad "--where state == BUSY: $(cat "$T/out")"
expect_rc 2 "--where on a value no schema had" "$PTLOG" dump --where 'state == BUZY' enum-change.jsonl

finish
