#!/bin/bash
# Exact round trips (issue 9 item 11): names and text attributes that are
# not valid UTF-8 survive ptl -> json -> ptl and ptl -> jsonl -> ptl byte for
# byte (the "KEY_hex" sibling keys of the JSON schema); converting a LOOP or
# UNTIL_FULL log to .ptl gives an honest sequential APPEND log.
. "$(dirname "$0")/ptlog/lib.sh"

# A log whose trace name, host name, program and event names hold bytes that
# are not UTF-8 (0xff, a lone 0xc3, Latin-1 0xe9), made from JSON with _hex keys.
cat >raw.jsonl <<'J'
{"format":{"schema":"tracelog","version":1},"attributes":{"trace_name":"t?race","trace_name_hex":"74ff72616365","creation_time_ns":1714564800000000000,"host":{"hostname":"h?","hostname_hex":"68c3"},"process":{"pid":7,"program":"/bin/?","program_hex":"2f62696e2fe9"}},"event_types":[{"id":40,"name":"ev?t","name_hex":"6576e974"},{"id":41,"name":"plain"}]}
{"id":40,"ts":1714564800000001000,"pid":7,"tid":1}
{"name":"caf?","name_hex":"636166e9","ts":1714564800000002000,"pid":7,"tid":1,"data":"00ff"}
{"name":"plain","ts":1714564800000003000,"pid":7,"tid":1}
J
expect_rc 0 "import of _hex names" "$PTLOG" convert raw.jsonl --to ptl -o raw.ptl
"$PTLOG" dump --relative raw.ptl >raw.txt
# (dump escapes bytes that are not UTF-8 as \xHH, so a name's exact bytes show)
printf '%s\n' '0.000000000 7 0x1 "ev\xe9t"' '0.000001000 7 0x1 "caf\xe9" 00ff' '0.000002000 7 0x1 plain' >want.txt
expect_same "names are the exact bytes of name_hex" want.txt raw.txt

for f in json jsonl; do
    expect_rc 0 "ptl -> $f" "$PTLOG" convert raw.ptl --to $f -o "rt.$f"
    grep -q '"name":"ev\\ufffdt","name_hex":"6576e974","id":40,"ts":1714564800000001000' "rt.$f" && ok ||
        bad "$f: event name without its exact bytes: $(grep -m1 '"id":40,"ts"' "rt.$f")"
    grep -q '"trace_name":"t\\ufffdrace","trace_name_hex":"74ff72616365"' "rt.$f" && ok || bad "$f: trace_name_hex missing"
    grep -q '"hostname":"h\\ufffd","hostname_hex":"68c3"' "rt.$f" && ok || bad "$f: hostname_hex missing"
    grep -q '"program":"/bin/\\ufffd","program_hex":"2f62696e2fe9"' "rt.$f" && ok || bad "$f: program_hex missing"
    grep -q '{"id":41,"name":"plain"}' "rt.$f" && ok || bad "$f: a UTF-8 name got a _hex key"
    expect_rc 0 "$f -> ptl" "$PTLOG" convert "rt.$f" --to ptl -o "rt.$f.ptl"
    "$PTLOG" dump --relative "rt.$f.ptl" >rt.txt
    expect_same "ptl -> $f -> ptl keeps the name bytes" raw.txt rt.txt
    "$PTLOG" convert "rt.$f.ptl" --to $f -o "rt2.$f"
    expect_same "ptl -> $f -> ptl -> $f is stable (attributes too)" "rt.$f" "rt2.$f"
done
if command -v python3 >/dev/null; then
    python3 - rt.json rt.jsonl <<'PY' && ok || bad "exported JSON is not valid, or its _hex keys disagree with the text"
import json, sys
d = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2])]
a = d["attributes"]
assert bytes.fromhex(a["trace_name_hex"]) == b"t\xffrace"
assert bytes.fromhex(a["process"]["program_hex"]) == b"/bin/\xe9"
assert bytes.fromhex(a["trace_name_hex"]).decode("utf-8", "replace") == a["trace_name"]
names = {bytes.fromhex(e["name_hex"]) if "name_hex" in e else e["name"].encode() for e in d["events"]}
assert names == {b"ev\xe9t", b"caf\xe9", b"plain"}, names
assert lines[1]["name_hex"] == "6576e974"
PY
fi

# Invalid _hex values: exit 3, the key named.
for bad in '"6576e97"' '"zz"' '"6500"' '""' '5'; do
    printf '{"events":[{"name_hex":%s,"ts":1}]}\n' "$bad" >badhex.json
    expect_rc 3 "name_hex $bad" "$PTLOG" convert badhex.json --to jsonl
    expect_err '^ptlog: badhex.json: event 0: key "name_hex": expected hex digit pairs of 1 to 255 bytes, none of them 00$' "name_hex $bad"
done
printf '{"attributes":{"trace_name_hex":"%s"},"events":[]}\n' "$(printf '61%.0s' $(seq 256))" >longhex.json
expect_rc 3 "trace_name_hex too long" "$PTLOG" convert longhex.json --to jsonl
expect_err 'key "attributes.trace_name_hex": expected hex digit pairs of 1 to 255 bytes' "trace_name_hex too long"
printf '{"event_types":[{"id":3,"name_hex":"0"}],"events":[]}\n' >typehex.json
expect_rc 3 "event_types name_hex" "$PTLOG" convert typehex.json --to jsonl
expect_err 'event_types\[0\]: key "name_hex": expected hex digit pairs' "event_types name_hex"

# A LOOP (or UNTIL_FULL) log converted to .ptl is a sequential APPEND log:
# no ring, no log size, its own log-side counters; stream-side ones kept.
for name in loop until_full; do
    src="$SRC/samples/golden/$name.ptl"
    expect_rc 0 "$name -> ptl" "$PTLOG" convert "$src" --to ptl -o "$name.seq.ptl"
    [ "$(od -An -tu1 -j40 -N1 "$name.seq.ptl" | tr -d ' ')" = 0 ] && ok || bad "$name: converted log has a ring layout"
    "$PTLOG" dump "$src" >orig.txt
    "$PTLOG" dump "$name.seq.ptl" >seq.txt
    expect_same "$name: same events" orig.txt seq.txt
    n=$(wc -l <orig.txt)
    "$PTLOG" convert "$src" --to json -o orig.json
    "$PTLOG" convert "$name.seq.ptl" --to json -o seq.json
    grep -q '"log_max_size":0,"stream_full_policy":"flush","log_full_policy":"append"' seq.json && ok ||
        bad "$name: converted log keeps its log policy or size: $(grep -o '"log_max_size[^}]*inheritance' seq.json)"
    grep -q "\"status\":{\"events_recorded\":0,\"events_written\":$n,\"stream_overruns\":0,\"log_overruns\":0,\"flush_error\":0,\"log_full\":false}" seq.json &&
        ok || bad "$name: converted log's status: $(grep -o '"status":{[^}]*}' seq.json)"
    grep -q '"log_full":true' orig.json && ok || bad "$name: the source was expected to be full"
done

finish
