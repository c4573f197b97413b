#!/bin/bash
# Timestamps for tools that hold numbers as doubles (README.md, "Querying
# with DuckDB and jq"): README's jq command, extracted from README.md and run
# as written, gives the exact gap between two events 8636 ns apart at today's
# epoch time (jq 1.6 gives 8704 on the default integer ns); --ts=text and
# --ts=relative read back into the same log, JSON document and JSON Lines,
# and their malformed forms are refused with the key named. jq is a Debian
# package (.ci/run installs it); skipped (77) without it.
. "$(dirname "$0")/ptlog/lib.sh"
command -v jq >/dev/null || { echo "SKIP: jq is needed"; exit 77; }

cat >gap.jsonl <<'J'
{"format":{"schema":"tracelog","version":1},"attributes":{"trace_name":"gap","creation_time_ns":1795000000000000000},"event_types":[{"id":1,"name":"a"}]}
{"id":1,"ts":1795000000123456789,"pid":1,"tid":1}
{"id":1,"ts":1795000000123465425,"pid":1,"tid":1,"data":"01"}
{"id":1,"ts":1794999999999999999,"pid":1,"tid":1}
J
expect_rc 0 "to ptl" "$PTLOG" convert gap.jsonl --to ptl -o app.ptl

cmd=$(sed -n '/^### Querying with DuckDB and jq$/,$p' "$SRC/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1,/^```$/d' |
    sed -n '/^```sh$/,/^```$/p' | sed '1d;$d')
case $cmd in
"ptlog convert app.ptl --to jsonl --ts=relative | jq "*) ok ;;
*) bad "README's jq command is not the one this test knows: $cmd"; finish ;;
esac
ptlog() { "$PTLOG" "$@"; }
[ "$(eval "$cmd")" = 8636 ] && ok || bad "README's jq command: $(eval "$cmd" 2>&1), want 8636"

# Each form's values, and back: the same events.
"$PTLOG" dump app.ptl >want.txt
for form in ns text relative; do
    for to in jsonl json; do
        expect_rc 0 "--ts=$form --to $to" "$PTLOG" convert app.ptl --to "$to" --ts="$form" -o "back.$to"
        expect_rc 0 "--ts=$form $to back" "$PTLOG" convert "back.$to" --to ptl -o back.ptl
        expect_rc 0 "dump" "$PTLOG" dump back.ptl
        expect_same "--ts=$form via $to" want.txt "$T/out"
    done
done
"$PTLOG" convert app.ptl --to jsonl --ts=text -o text.jsonl
[ "$(jq -r 'select(.id) | .ts' text.jsonl | tr '\n' ' ')" = "1795000000.123456789 1795000000.123465425 1794999999.999999999 " ] &&
    ok || bad "--ts=text values: $(jq -r 'select(.id) | .ts' text.jsonl | tr '\n' ' ')"
"$PTLOG" convert app.ptl --to jsonl --ts=relative -o rel.jsonl
[ "$(jq -c 'select(.format) | .format | [.ts, .ts_origin_ns]' rel.jsonl)" = '["relative",1795000000000000000]' ] &&
    ok || bad "--ts=relative header: $(head -c 200 rel.jsonl)"
[ "$(jq -r 'select(.id) | .ts' rel.jsonl | tr '\n' ' ')" = "123456789 123465425 -1 " ] &&
    ok || bad "--ts=relative values: $(jq -r 'select(.id) | .ts' rel.jsonl | tr '\n' ' ')"

# Past 2^63 ns from the origin either way: strings ("0x..." after, "-DIGITS" before), read back exactly.
printf '%s\n' '{"format":{"schema":"tracelog","version":1},"attributes":{"creation_time_ns":"0xffffffffffffff00"},"event_types":[{"id":1,"name":"a"}]}' \
    '{"id":1,"ts":1,"pid":1,"tid":1}' '{"id":1,"ts":"0xffffffffffffff10","pid":1,"tid":1}' >far.jsonl
printf '%s\n' '{"format":{"schema":"tracelog","version":1},"attributes":{"creation_time_ns":0},"event_types":[{"id":1,"name":"a"}]}' \
    '{"id":1,"ts":"0xfffffffffffffff0","pid":1,"tid":1}' >far0.jsonl
for f in far far0; do
    "$PTLOG" convert $f.jsonl --to ptl -o $f.ptl && "$PTLOG" dump $f.ptl >$f.want
    expect_rc 0 "$f: --ts=relative" "$PTLOG" convert $f.ptl --to jsonl --ts=relative -o $f.rel.jsonl
    expect_rc 0 "$f: back" "$PTLOG" convert $f.rel.jsonl --to ptl -o $f.back.ptl
    expect_rc 0 "$f: dump" "$PTLOG" dump $f.back.ptl
    expect_same "$f: relative past 2^63" $f.want "$T/out"
done
[ "$(jq -c 'select(.id) | .ts' far.rel.jsonl | tr '\n' ' ')" = '"-18446744073709551359" 16 ' ] &&
    [ "$(jq -c 'select(.id) | .ts' far0.rel.jsonl)" = '"0xfffffffffffffff0"' ] && ok ||
    bad "relative past 2^63: $(jq -c 'select(.id) | .ts' far.rel.jsonl far0.rel.jsonl | tr '\n' ' ')"

# Refused: an unknown form, a malformed text, a relative log without its origin, one out of range.
expect_rc 2 "--ts=ms" "$PTLOG" convert app.ptl --to jsonl --ts=ms
expect_err "--ts: unknown form 'ms' \(expected ns, text or relative\)" "--ts=ms"
bad_line() { # DESC HEADER_FORMAT EVENT_TS REGEX
    printf '{"format":{"schema":"tracelog","version":1%s},"attributes":{}}\n{"id":1,"ts":%s}\n' "$2" "$3" >bad.jsonl
    expect_rc 3 "$1" "$PTLOG" convert bad.jsonl --to ptl -o bad.ptl
    expect_err "$4" "$1"
    [ ! -e bad.ptl ] && ok || bad "$1: left bad.ptl"
}
bad_line "text, 8 digits" '' '"1.12345678"' 'key "ts": expected integer nanoseconds since the epoch, or "SECONDS.NNNNNNNNN"$'
bad_line "text, not digits" '' '"1.12345678x"' 'key "ts": expected integer'
bad_line "text, too big" '' '"18446744074.000000000"' 'key "ts": expected integer'
bad_line "negative, not relative" '' '-5' 'key "ts": expected integer nanoseconds since the epoch'
bad_line "relative without origin" ',"ts":"relative"' '5' 'key "format.ts_origin_ns": missing'
bad_line "unknown form" ',"ts":"ms"' '5' 'key "format.ts": expected "ns", "text" or "relative"$'
bad_line "relative before 0" ',"ts":"relative","ts_origin_ns":10' '-11' 'key "ts": relative time out of range'
bad_line "relative past 2^64" ',"ts":"relative","ts_origin_ns":10' '"18446744073709551615"' 'key "ts": relative time out of range'

finish
