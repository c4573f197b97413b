#!/bin/bash
# Typed payloads in ptlog (tools/ptlog/fields.c, README.md "Typed events"):
# dump shows fields by name, text quoted and escaped, a payload whose size is
# not its schema's flagged and decoded as far as it fits; --hex keeps the
# raw bytes; untyped events stay as before. The log is written with the
# writer API by tests/ptlog/make_typed.c.
. "$(dirname "$0")/ptlog/lib.sh"

MAKE_TYPED=${TL_BUILD_DIR:?}/tests/make_typed
"$MAKE_TYPED" typed.ptl || { echo "FAIL: make_typed"; exit 1; }

expect_rc 0 "dump typed" "$PTLOG" dump --relative typed.ptl
cat >want.txt <<'W'
0.000000000 7 0x9 net.rx { len = 500, port = 443, iface = "eth0", latency = 0.000231, big = 9007199254740992, delta = 0, state = IDLE, mode = 0, ok = false }
0.000001000 7 0x9 net.rx { len = 1000, port = 80, iface = "eth1", latency = 0.000462, big = 9007199254740993, delta = -1, state = BUSY, mode = READ, ok = true }
0.000002000 7 0x9 net.rx { len = 1500, port = 443, iface = "lo \"x\"", latency = 0.000693, big = 9007199254740994, delta = -2, state = 2, mode = WRITE, ok = false }
0.000003000 7 0x9 net.rx { len = 2000, port = 80, iface = "eth0", latency = 0.000924, big = 9007199254740995, delta = -3, state = IDLE, mode = READ|WRITE, ok = true }
0.000004000 7 0x9 net.rx { len = 2500, port = 443, iface = "eth1", latency = 0.001155, big = 9007199254740996, delta = -4, state = BUSY, mode = 0x80, ok = false }
0.000005000 7 0x9 net.rx { len = 3000, port = 80, iface = "lo \"x\"", latency = 0.001386, big = 18446744073709551615, delta = -5, state = 2, mode = READ, ok = true }
0.000010000 7 0x9 net.rx [short: 10 of 48 bytes] { len = 1, port = 2 }
0.000011000 7 0x9 net.rx [long: 51 of 48 bytes] { len = 1, port = 2, iface = "", latency = 0, big = 0, delta = 0, state = IDLE, mode = 0, ok = false }
0.000012000 7 0x9 msg { code = 1, text = "hello" }
0.000013000 7 0x9 plain "raw"
0.000014000 7 0x9 req.begin { req = 12 }
0.000015000 7 0x9 req.end { req = 12, status = -5 }
W
expect_same "typed dump" want.txt "$T/out"

# --hex: the raw payload, no braces.
expect_rc 0 "dump --hex" "$PTLOG" dump --relative --hex typed.ptl
grep -q '^0.000012000 7 0x9 msg 0100000068656c6c6f$' "$T/out" && ok || bad "--hex msg: $(sed -n 9p "$T/out")"
grep -c '{' "$T/out" | grep -qx 0 && ok || bad "--hex still decodes"

# Control bytes in a char field are escaped as dump escapes text (a schema read from JSON).
printf '{"attributes":{},"event_types":[{"id":40,"name":"t","schema":"char[4] s"}]}\n{"id":40,"ts":1,"data":"0a1b2200"}\n' >esc.jsonl
expect_rc 0 "dump JSON with a schema" "$PTLOG" dump --relative esc.jsonl
grep -qxF '0.000000000 0 0x0 t { s = "\n\x1b\"" }' "$T/out" && ok || bad "escaped char field: $(cat "$T/out")"

# A bad schema in JSON names the entry and the byte.
printf '{"attributes":{},"event_types":[{"id":40,"name":"t","schema":"u32 a; u33 b"}]}\n' >bad.jsonl
expect_rc 3 "bad schema" "$PTLOG" dump bad.jsonl
expect_err 'event_types\[0\]: key "schema": schema byte 7: unknown type' "bad schema message"

# JSON: a "fields" object beside "data"; u64 above 2^53 as strings, enums by
# name (number when unnamed), flags as text, the size check named.
expect_rc 0 "to jsonl" "$PTLOG" convert --to jsonl typed.ptl -o typed.jsonl
python3 - typed.jsonl <<'PY' && ok || bad "jsonl fields"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
types = {t["id"]: t for t in lines[0]["event_types"]}
assert types[40]["schema"].startswith("u32 len; u16 port; char[16] iface; f64 latency"), types[40]
assert "schema" not in types[42]
ev = lines[1:-1]
f = ev[0]["fields"]
assert f == {"len": 500, "port": 443, "iface": "eth0", "latency": 0.000231, "big": 9007199254740992,
             "delta": 0, "state": "IDLE", "mode": "0", "ok": False}, f
assert ev[1]["fields"]["big"] == "9007199254740993", ev[1]
assert ev[2]["fields"]["iface"] == 'lo "x"' and ev[2]["fields"]["state"] == 2
assert ev[3]["fields"]["mode"] == "READ|WRITE" and ev[4]["fields"]["mode"] == "0x80"
assert ev[5]["fields"]["big"] == "18446744073709551615"
assert ev[6]["fields"] == {"len": 1, "port": 2} and ev[6]["fields_size"] == "short"
assert ev[7]["fields_size"] == "long" and ev[0]["fields_size"] is None   # on every event: null when complete
assert ev[8]["fields"] == {"code": 1, "text": "hello"}
assert ev[9]["fields"] == {} and ev[9]["fields_size"] is None             # untyped: {} and null
PY

# Schemas survive ptl -> json -> ptl, filter and merge exactly.
for to in json jsonl; do
    "$PTLOG" convert --to $to typed.ptl -o rt.$to && "$PTLOG" convert --to ptl rt.$to -o rt.$to.ptl || bad "round trip $to"
    "$PTLOG" convert --to jsonl rt.$to.ptl -o rt.$to.jsonl && cmp -s typed.jsonl rt.$to.jsonl && ok || bad "round trip through $to: $(diff typed.jsonl rt.$to.jsonl | head -4)"
done
expect_rc 0 "filter" "$PTLOG" filter typed.ptl -o filtered.ptl
"$PTLOG" convert --to jsonl filtered.ptl -o filtered.jsonl && cmp -s typed.jsonl filtered.jsonl && ok || bad "filter keeps schemas"
expect_rc 0 "merge" "$PTLOG" merge typed.ptl rt.json.ptl -o merged.ptl
"$PTLOG" dump merged.ptl | grep -c 'net.rx { len = 500, port = 443' | grep -qx 2 && ok || bad "merge keeps schemas"
# Inputs giving one name different schemas (or a schema and none) are
# refused, naming both inputs and both schemas; no output is left behind.
printf '{"attributes":{},"event_types":[{"id":40,"name":"m.x","schema":"u32 a"}]}\n{"id":40,"ts":1,"data":"01000000"}\n' >ma.jsonl
printf '{"attributes":{},"event_types":[{"id":7,"name":"m.x","schema":"u16 a; u16 b"}]}\n{"id":7,"ts":2,"data":"01000200"}\n' >mb.jsonl
printf '{"attributes":{},"event_types":[{"id":40,"name":"m.x"}]}\n{"id":40,"ts":3,"data":"01000000"}\n' >mc.jsonl
rm -f conflict.ptl
expect_rc 3 "merge of two schemas for a name" "$PTLOG" merge ma.jsonl mb.jsonl -o conflict.ptl
expect_err '^ptlog: mb\.jsonl: event type "m\.x" has schema "u16 a; u16 b" here but "u32 a" in ma\.jsonl: merge keeps one schema per name$' "merge conflict message"
[ ! -e conflict.ptl ] && ok || bad "a refused merge left conflict.ptl"
expect_rc 3 "merge of a schema and none" "$PTLOG" merge ma.jsonl mc.jsonl -o conflict.ptl
expect_err '^ptlog: mc\.jsonl: event type "m\.x" has schema none here but "u32 a" in ma\.jsonl' "merge conflict with none"
expect_rc 0 "merge of one schema twice" "$PTLOG" merge ma.jsonl ma.jsonl -o same.ptl
"$PTLOG" dump --relative same.ptl | grep -c 'm.x { a = 1 }' | grep -qx 2 && ok || bad "merge of equal schemas"

# Importing typed JSON: fields/fields_size are checked as JSON and not read
# (data is authoritative); a bad value is still an error with its position,
# whichever parser (the fast path or jansson) meets it.
for v in '1e400' '123456789012345678901' '{"a":1,"a":2}' '[1,2,' '1.' '01' 'tru' '"x'; do
    printf '{"attributes":{}}\n{"ts":1,"id":3,"data":"01","fields":%s}\n' "$v" >bad.jsonl
    expect_rc 3 "fields $v" "$PTLOG" dump bad.jsonl
    grep -q '^ptlog: bad.jsonl:2:[0-9]*: ' "$T/err" && ok || bad "fields $v: $(cat "$T/err")"
done
for v in '{"a":-1.5e-07,"b":[true,false,null],"c":{"d":"e"}}' '{"x":[{"y":[{"z":[1]}]}]}' '"long"'; do
    printf '{"attributes":{}}\n{"ts":1,"id":3,"data":"01","fields":%s,"fields_size":"short"}\n' "$v" >ok.jsonl
    expect_rc 0 "fields $v" "$PTLOG" dump --relative ok.jsonl
    printf '0.000000000 0 0x0 event#3 01\n' >want.txt
    expect_same "fields $v ignored" want.txt "$T/out"
done

# --where: field conditions on dump, filter and convert.
where_ts() { # where_ts EXPR: the relative times dump --where keeps, one line
    "$PTLOG" dump --relative --where "$1" typed.ptl | cut -c5-11 | tr '\n' ' '
}
check_where() {
    local got
    got=$(where_ts "$1")
    [ "$got" = "$2" ] && ok || bad "--where '$1': kept '$got', want '$2'"
}
check_where 'port == 443 && len > 1000' '0002000 0004000 '
check_where 'port == 443 && len > 1000 || iface == "eth0"' '0000000 0002000 0003000 0004000 '
check_where '!(port != 80)' '0001000 0003000 0005000 '
check_where 'state == BUSY' '0001000 0004000 '
check_where 'state == 2 && ok == true' '0005000 '
check_where 'iface == "lo \"x\""' '0002000 0005000 '
check_where 'iface < "eth1"' '0000000 0003000 0011000 '
check_where 'big > 9007199254740993' '0002000 0003000 0004000 0005000 '
check_where 'big == 18446744073709551615' '0005000 '
check_where 'delta <= -4.5 || latency >= 0.0013' '0005000 '
check_where 'mode == "READ|WRITE"' '0003000 '
check_where 'req == 12' '0014000 0015000 '
check_where 'status < 0' '0015000 '
# Two negative integers compare by value, not by magnitude (delta is i8: 0, -1, .. -5, and 0 in
# the long payload; status is i32 -5), with every operator; a negative literal against an unsigned field.
check_where 'delta <= -3' '0003000 0004000 0005000 '
check_where 'delta < -3' '0004000 0005000 '
check_where 'delta >= -2' '0000000 0001000 0002000 0011000 '
check_where 'delta > -2' '0000000 0001000 0011000 '
check_where 'delta == -4' '0004000 '
check_where 'delta != -4' '0000000 0001000 0002000 0003000 0005000 0011000 '
check_where 'delta > -1' '0000000 0011000 '
check_where 'status > -6 && status < -4' '0015000 '
check_where 'status >= -5 && status <= -5' '0015000 '
check_where 'status < -5 || status > -5' ''
check_where 'len > -1 && len < 600' '0000000 0010000 0011000 '
check_where 'len < -1' ''
# a field the event lacks never matches, negated or not: the short event has port but no state
check_where 'port == 2' '0010000 0011000 '
check_where '!(state == IDLE) && port < 100' '0001000 0005000 '
# code is a field of msg only: the events without it match neither the comparison nor its negation
check_where 'code == 1 || !(code == 1)' '0012000 '
check_where 'code == 2 || !(code == 2)' '0012000 '
# Fields that are all numbers and text go into one reservation per event (fields.c, the plans' rooms):
# at their widest (63-byte names, 20-digit integers, nan and inf, text to escape, char[255] full, a
# char[] of 300 bytes), dump and JSON Lines print what the field-by-field path printed (the golden files
# were made by 012a73b's ptlog, before the reservation), with 0 and 2 formatting threads.
"$MAKE_TYPED" --wide wide.ptl || bad "make_typed --wide"
for threads in 0 2; do
    PTLOG_FORMAT_THREADS=$threads "$PTLOG" dump --relative wide.ptl >wide.txt || bad "dump wide.ptl"
    golden wide.txt wide.txt
    PTLOG_FORMAT_THREADS=$threads "$PTLOG" convert --to jsonl wide.ptl | grep '^{"name":"wide"' >wide.jsonl
    golden wide.jsonl wide.jsonl
done
# Two schemas with field x at different offsets, their events interleaved: --where keeps the last
# schema's comparison (where.c, ranged_schema) and must switch with each event's schema, untyped
# events between them, and one cut inside x. Event i is at ts i; x is 5 in events 1, 2, 4 and 7 only.
{
    printf '{"attributes":{},"event_types":[{"id":1,"name":"a","schema":"u16 x; u16 y"},'
    printf '{"id":2,"name":"b","schema":"u16 y; u16 x"},{"id":3,"name":"c"}]}\n'
    printf '{"id":1,"ts":1,"data":"05000900"}\n{"id":2,"ts":2,"data":"09000500"}\n{"id":2,"ts":3,"data":"05000900"}\n'
    printf '{"id":1,"ts":4,"data":"05000500"}\n{"id":3,"ts":5,"data":"0500"}\n{"id":1,"ts":6,"data":"09000500"}\n'
    printf '{"id":2,"ts":7,"data":"00000500"}\n{"id":1,"ts":8,"data":"05"}\n'
} >xy.jsonl
"$PTLOG" convert --to ptl xy.jsonl -o xy.ptl || bad "convert xy.jsonl"
for in in xy.jsonl xy.ptl; do
    got=$("$PTLOG" dump --where 'x == 5' "$in" | awk '{print $1}' | sed 's/.*\.0*//; s/Z$//' | tr '\n' ' ')
    [ "$got" = "1 2 4 7 " ] && ok || bad "--where 'x == 5' on $in across two schemas: kept '$got'"
done
# Numbers compared straight from the payload bytes (issue 27): f32, i16, i64 and u8 fields, NaN
# (never ordered), -inf, the i64 extremes, and an event cut inside l (l and b absent). Event i is at i ms.
"$MAKE_TYPED" --numbers num.ptl || bad "make_typed --numbers"
check_num() { # check_num EXPR EVENTS
    local got
    got=$("$PTLOG" dump --relative --where "$1" num.ptl | cut -c5 | tr '\n' ' ')
    [ "$got" = "$2" ] && ok || bad "--where '$1' on num.ptl: kept '$got', want '$2'"
}
check_num 'f < 0' '1 4 6 '
check_num '!(f < 0)' '0 3 5 '
check_num 'f > 1e38' '5 '
check_num 'f == 1.5' '0 '
check_num 's < -299' '2 5 '
check_num 's >= 300' '1 3 6 '
check_num 'l < 0' '0 1 4 '
check_num 'l == -9223372036854775808' '0 '
check_num 'l > 9223372036854775806' '2 '
check_num 'l == -4000000000' '4 '
check_num 'b > 100' '1 5 '
check_num '!(b > 100)' '0 2 3 4 '
check_num 'b == 255 || s == 300' '1 6 '
# Integer comparisons are ranges of the field's values made once per schema: the ends of each type,
# constants past them on either side, every operator (a range off by one at an end fails these).
check_num 'l < -9223372036854775808' ''
check_num 'l >= -9223372036854775808' '0 1 2 3 4 5 '
check_num 'l > 9223372036854775807' ''
check_num 'l <= 9223372036854775807' '0 1 2 3 4 5 '
check_num 'l < 9223372036854775808 && l > -9223372036854775809' '0 1 2 3 4 5 '
check_num 'l != 9223372036854775808 && l != -9223372036854775809' '0 1 2 3 4 5 '
check_num 'l <= 9223372036854775808 && l < 18446744073709551615 && l >= -18446744073709551615' '0 1 2 3 4 5 '
check_num 'l > -9223372036854775810 && l >= -9223372036854775809' '0 1 2 3 4 5 '
check_num 'l == 9223372036854775808 || l >= 18446744073709551615 || l <= -9223372036854775809' ''
check_num 'l > 9223372036854775806 || l < -9223372036854775807' '0 2 '
check_num 'b < 0 || b <= -1 || b == -1' ''
check_num 'b >= -1 && b > -2 && b != -1' '0 1 2 3 4 5 '
check_num 'b > 254 && b < 256' '1 '
check_num 'b >= 255 || b <= 0' '0 1 '
check_num 'b != 255 && b != 0' '2 3 4 5 '
check_num 's <= -32768 || s >= 32767' '2 3 '
check_num 's != -32768 && s != 32767 && s > -32769 && s < 32768' '0 1 4 5 6 '
# The same values in JSON Lines: negative integers, i64 beyond 2^53 as strings, nan and -inf as strings
want_num='{"f":1.5,"s":-1,"l":"-9223372036854775808","b":0},"fields_size":null}
{"f":-2.5,"s":300,"l":-1,"b":255},"fields_size":null}
{"f":"nan","s":-32768,"l":"9223372036854775807","b":7},"fields_size":null}
{"f":0,"s":32767,"l":0,"b":1},"fields_size":null}
{"f":"-inf","s":0,"l":-4000000000,"b":2},"fields_size":null}
{"f":3e+38,"s":-300,"l":5,"b":200},"fields_size":null}
{"f":-2.5,"s":300},"fields_size":"short"}'
got_num=$("$PTLOG" convert --to jsonl num.ptl | grep '^{"name":"num"' | sed 's/.*"fields"://')
[ "$got_num" = "$want_num" ] && ok || bad "num.ptl as JSON Lines: $got_num"
# A field no schema of the log has, or a value no enum or flags field of that name has, is a usage
# error naming it and its close candidates (issue 26 item 7: they printed nothing and exited 0), in
# dump, filter and convert, for a seekable log (before any output), a pipe and JSON Lines (at the end).
where_err() { # where_err EXPR MESSAGE-REGEX
    local in
    for in in typed.ptl where.jsonl; do
        expect_rc 2 "--where '$1' on $in" "$PTLOG" dump --where "$1" "$in"
        expect_err "$2" "--where '$1' on $in: message"
        [ -s "$T/out" ] && bad "--where '$1' on $in: printed $(head -c 200 "$T/out")" || ok
    done
    run sh -c 'cat typed.ptl | "$0" dump --where "$1" -' "$PTLOG" "$1"
    [ "$RC" = 2 ] && ok || bad "--where '$1' from a pipe: exit $RC"
    expect_err "$2" "--where '$1' from a pipe: message"
    rm -f wf.ptl wc.jsonl
    expect_rc 2 "filter --where '$1'" "$PTLOG" filter --where "$1" typed.ptl -o wf.ptl
    [ ! -e wf.ptl ] && ok || bad "filter --where '$1' left its output"
    expect_rc 2 "convert --where '$1'" "$PTLOG" convert --to jsonl --where "$1" typed.ptl -o wc.jsonl
    [ ! -e wc.jsonl ] && ok || bad "convert --where '$1' left its output"
}
"$PTLOG" convert --to jsonl typed.ptl -o where.jsonl
where_err 'nosuch == 1 || !(nosuch == 1)' '^ptlog: --where: no event type of [^ ]+ has a field "nosuch"$'
where_err 'latncy > 0.0005' '^ptlog: --where: no event type of [^ ]+ has a field "latncy" \(did you mean "latency"\?\)$'
where_err 'port == 443 && stat == 1' 'has a field "stat" \(did you mean "state" or "status"\?\)$'
# A log cut before its types: the damage is what is reported (exit 1, its warnings), not a field
# the lost types had (it was a usage error, exit 2, with no word of the damage).
head -c 300 typed.ptl >typed_cut.ptl
expect_rc 1 "--where on a log cut before its types" "$PTLOG" dump --where 'latency > 0' typed_cut.ptl
grep -q 'typed_cut.ptl: warning: .*bytes skipped at offset' "$T/err" && ok ||
    bad "--where on a cut log: the damage is not said: $(cat "$T/err")"
where_err 'state == BUZY' '^ptlog: --where: BUZY is not a value of field "state" \(did you mean "BUSY"\?\); its values: IDLE, BUSY$'
where_err 'state == "URGENT"' '^ptlog: --where: "URGENT" is not a value of field "state"; its values: IDLE, BUSY$'
where_err 'mode == "READ|WRTE"' '"READ\|WRTE" is not a value of field "mode"; its values: READ, WRITE$'
where_err 'port == https' '^ptlog: --where: https is not a value of field "port" \(a u16 field: compare it with a number\)$'
where_err 'ok == yes' 'yes is not a value of field "ok" \(a bool field: compare it with true or false\)$'
# what a field can show is a value: names, numbers of unnamed enum values, flags joined by |, text
check_where 'state == "2" || mode == "READ|0x80" || mode == "0"' '0000000 0002000 0005000 0011000 '
check_where 'iface == eth0' '0000000 0003000 '
for bad_expr in 'port = 443:6' 'port == 443 &&:15' '(port == 1:1' 'port == 1):10' 'port == "x:9' 'port ==:8' '== 1:1' 'port == 12ab:9'; do
    expr=${bad_expr%:*} col=${bad_expr##*:}
    expect_rc 2 "bad --where '$expr'" "$PTLOG" dump --where "$expr" typed.ptl
    expect_err "^ptlog: --where: column $col: " "column of '$expr'"
done
expect_rc 0 "filter --where" "$PTLOG" filter --where 'port == 443' typed.ptl -o w.ptl
"$PTLOG" dump --relative w.ptl | grep -c '' | grep -qx 3 && ok || bad "filter --where kept $("$PTLOG" dump w.ptl | wc -l)"
expect_rc 0 "convert --where" "$PTLOG" convert --to jsonl --where 'code == 1' typed.ptl -o w.jsonl
grep -c '"ts"' w.jsonl | grep -qx 1 && ok || bad "convert --where: $(cat w.jsonl)"

# chrome: fields in args; X.begin / X.end pairs are B/E slices (end_ fields on the E).
expect_rc 0 "to chrome" "$PTLOG" convert --to chrome typed.ptl -o typed.chrome
printf '{"attributes":{},"event_types":[{"id":40,"name":"k","schema":"u32 data; u8 pthread"},{"id":41,"name":"a.begin"},{"id":42,"name":"a:end"}]}\n{"id":40,"ts":1,"data":"0700000009000000"}\n{"id":41,"ts":2}\n{"id":42,"ts":3}\n' >keys.jsonl
expect_rc 0 "chrome reserved keys" "$PTLOG" convert --to chrome keys.jsonl -o keys.chrome
python3 - typed.chrome keys.chrome <<'PY' && ok || bad "chrome args"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
a = ev[0]["args"]
assert a["len"] == 500 and a["iface"] == "eth0" and a["state"] == "IDLE" and a["data"].startswith("f401"), a
assert ev[1]["args"]["big"] == "9007199254740993"
b, e = ev[10], ev[11]
assert (b["name"], b["ph"], b["args"]["req"]) == ("req", "B", 12), b
assert (e["name"], e["ph"], e["args"]["end_req"], e["args"]["end_status"]) == ("req", "E", 12, -5), e
assert "args" not in ev[9] or "len" not in ev[9]["args"]
k = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] != "M"]
assert k[0]["args"]["field_data"] == 7 and k[0]["args"]["field_pthread"] == 9 and k[0]["args"]["data"] == "0700000009000000", k[0]
# a.begin is not closed by a:end (other separator): the begin stays open, the end is an instant
assert [(x["name"], x["ph"]) for x in k[1:]] == [("a", "B"), ("a:end", "i"), ("a", "E")], k[1:]
PY
# The same events read from a .ptl log, whose names chrome.c and tracks.c keep the text of by their
# address, against read from JSON, whose names they make again each time: the same traceEvents.
{
    printf '{"attributes":{},"event_types":[{"id":40,"name":"k","schema":"u32 data; u8 pthread"},{"id":41,"name":"a.begin","schema":"u8 v"},{"id":42,"name":"a:end"},{"id":43,"name":"a.end","schema":"u8 w"}]}\n'
    for i in 1 2 3 4 5 6; do
        printf '{"id":41,"ts":%d1,"tid":%d,"data":"0%d"}\n{"id":40,"ts":%d2,"data":"0%d00000001000000"}\n' "$i" $((i % 2)) "$i" "$i" "$i"
        printf '{"id":42,"ts":%d3,"tid":%d}\n{"id":43,"ts":%d4,"tid":%d,"data":"0%d"}\n' "$i" $((i % 2)) "$i" $((i % 2)) "$i"
    done
} >slices.jsonl
expect_rc 0 "chrome slices from JSON" "$PTLOG" convert --to chrome slices.jsonl -o slices.chrome
expect_rc 0 "slices to ptl" "$PTLOG" convert slices.jsonl --to ptl -o slices.ptl
expect_rc 0 "chrome slices from a log" "$PTLOG" convert --to chrome slices.ptl -o slices_ptl.chrome
python3 - slices.chrome slices_ptl.chrome <<'PY' && ok || bad "chrome from a log differs from chrome from JSON"
import json, sys
a, b = (json.load(open(f))["traceEvents"] for f in sys.argv[1:])
assert a == b, (a, b)
ev = [e for e in a if e["ph"] != "M"]
assert [e["ph"] for e in ev].count("B") == 6 and [e["ph"] for e in ev].count("E") == 6, ev
e = [x for x in ev if x["ph"] == "E"]
assert all(x["name"] == "a" and x["args"] == {"end_data": "0%d" % (i + 1), "end_w": i + 1} for i, x in enumerate(e)), e
assert [x["args"]["field_data"] for x in ev if x["name"] == "k"] == [1, 2, 3, 4, 5, 6]
PY
# 450 type names, more than the 64 slots that keep them by address (chrome's heads, tracks' slice
# shapes, Perfetto's interned names): slots shared by several names must still give each its own.
python3 - >many.jsonl <<'PY'
import json
K = 150
types = []
for k in range(K):
    types += [{"id": 100 + 3 * k, "name": "s%d.begin" % k}, {"id": 101 + 3 * k, "name": "s%d.end" % k},
              {"id": 102 + 3 * k, "name": "t%d" % k}]
print(json.dumps({"attributes": {}, "event_types": types}))
ts = 1
for r in range(3):
    for k in range(K):
        j = (k * 37 + r * 11) % K
        for i in (100 + 3 * j, 102 + 3 * j, 101 + 3 * j):
            print(json.dumps({"id": i, "ts": ts, "tid": j % 3}))
            ts += 1
PY
expect_rc 0 "many names to ptl" "$PTLOG" convert many.jsonl --to ptl -o many.ptl
for from in many.jsonl many.ptl; do
    expect_rc 0 "chrome from $from" "$PTLOG" convert --to chrome "$from" -o "$from.chrome"
    expect_rc 0 "perfetto from $from" "$PTLOG" convert --to perfetto "$from" -o "$from.pftrace"
done
cmp -s many.jsonl.pftrace many.ptl.pftrace && ok || bad "perfetto from a log of 450 names differs from perfetto from JSON"
python3 - many.jsonl.chrome many.ptl.chrome <<'PY' && ok || bad "chrome from a log of 450 names differs from chrome from JSON"
import json, sys
a, b = (json.load(open(f))["traceEvents"] for f in sys.argv[1:])
assert a == b
ev = [e for e in a if e["ph"] != "M"]
assert len(ev) == 1350 and [e["ph"] for e in ev].count("B") == 450 and [e["ph"] for e in ev].count("E") == 450
assert all(e["name"].startswith("t") for e in ev if e["ph"] == "i")
PY

finish
