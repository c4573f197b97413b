#!/bin/bash
# ptlog info (text and --json, golden), --quick, and ptlog verify (golden report,
# damaged, truncated and unreadable logs with their exit codes).
. "$(dirname "$0")/ptlog/lib.sh"
make_small

expect_rc 0 "info" "$PTLOG" info small.ptl
golden info.txt "$T/out"
expect_rc 0 "info --json" "$PTLOG" info --json small.ptl
golden info.json "$T/out"
if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["events"] == 8 and len(d["event_types"]) == 8' "$T/out" &&
        ok || bad "info --json is not the expected JSON"
fi
expect_rc 0 "info --quick" "$PTLOG" info --quick small.ptl
grep -v '^ *[0-9]\+ \|^event types:\|^ *ID \|^$' "$GOLD/info.txt" >want
expect_same "info --quick: the summary without the per-type table" want "$T/out"
run bash -c "cat small.ptl | '$PTLOG' info -"
sed 's/^file: .*/file: <stdin>/' "$GOLD/info.txt" >want
sed 's/^file: .*/file: <stdin>/' "$T/out" >got
expect_same "info of a pipe: same figures" want got

expect_rc 0 "verify" "$PTLOG" verify small.ptl
golden verify.txt "$T/out"
expect_rc 0 "verify -q" "$PTLOG" verify -q small.ptl
[ -s "$T/out" ] && bad "verify -q printed something for a clean log" || ok

# Damage: the problem and its offset are reported, exit 1.
make_many many 30000
size=$(stat -c %s many.ptl)
cp many.ptl damaged.ptl
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of=damaged.ptl bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect_rc 1 "verify damaged" "$PTLOG" verify damaged.ptl
grep -Eq '^problem: offset [0-9]+: .*TRACELOG_E_CHECKSUM' "$T/out" && ok || bad "verify damaged: $(cat "$T/out")"
grep -q '^result: DAMAGED' "$T/out" && ok || bad "verify damaged: no DAMAGED result"
expect_err '^ptlog: damaged.ptl: 1 problem found \(recovered with loss\)$' "verify damaged stderr"
grep -q '^result: DAMAGED: 1 problem, ' "$T/out" && ok || bad "verify damaged: $(grep result "$T/out")"
# A log cut short: the problem's code is said once (the message ends with it, and it was said again).
head -c $((size - 100)) many.ptl >cut.ptl
expect_rc 1 "verify cut" "$PTLOG" verify cut.ptl
grep -q '^problem: offset [0-9]*: log ends with an incomplete or damaged block ([0-9]* bytes skipped, TRACELOG_E_TRUNCATED)$' \
    "$T/out" && ok || bad "verify cut: $(grep problem "$T/out")"
expect_rc 1 "info damaged" "$PTLOG" info damaged.ptl
grep -q '^problems: *1 ' "$T/out" && ok || bad "info damaged: problems not counted"

head -c $((size - 10)) many.ptl >cut.ptl
expect_rc 1 "verify cut" "$PTLOG" verify cut.ptl
grep -q 'shutdown: not closed' "$T/out" && ok || bad "verify cut: not reported as unclosed"
grep -Eq '^problem: offset [0-9]+: .*TRACELOG_E_TRUNCATED' "$T/out" && ok || bad "verify cut: $(cat "$T/out")"

# How a log ended is told apart (spec 8.6): a closed log whose only problem is a loss the writer
# counted (event-type names, thread ids it had no room for) is neither "not closed" nor "damaged".
# The exit codes are info's, then verify's: verify exits 0 only for a clean log, so a log that
# was not closed exits 1 although nothing in it is damaged (issue 24).
V="$SRC/format-spec/vectors"
for c in "status-types-dropped:1:1:closed, with a known loss (see the problems)" \
         "status-threads-dropped:1:1:closed, with a known loss (see the problems)" \
         "damage-junk:1:1:closed, but damaged (see the problems): recovered" \
         "valid-not-closed:0:1:not closed (no trailer): recovered" \
         "torn-tail-3:1:1:not closed, or damaged (see the problems): recovered" \
         "valid-minimal:0:0:clean (trailer found)"; do
    v=${c%%:*} rest=${c#*:}; rc_info=${rest%%:*} rest=${rest#*:}; rc_verify=${rest%%:*} want=${rest#*:}
    for cmd in info verify; do
        rc=$rc_info
        [ $cmd = verify ] && rc=$rc_verify
        expect_rc "$rc" "$cmd $v" "$PTLOG" $cmd "$V/$v.ptl"
        got=$(sed -n 's/^shutdown: *//p' "$T/out")
        [ "$got" = "$want" ] && ok || bad "$cmd $v: shutdown: '$got', want '$want'"
    done
done

expect_rc 3 "verify missing" "$PTLOG" verify nosuch.ptl
expect_err '^ptlog: nosuch.ptl: cannot open' "verify missing"
expect_rc 3 "verify JSON" "$PTLOG" verify "$GOLD/small.in.jsonl"
expect_err 'not a .ptl log \(bad magic\)$' "verify of a JSON file"
expect_rc 3 "info directory" "$PTLOG" info .
expect_err '^ptlog: \.: is a directory$' "info directory"

# The time span's digits are exact past 2^53 ns (104 days): a double printed ...000000125 for ...123.
printf '{"events":[{"ts":1000000000000000000,"id":1},{"ts":1010000000000000123,"id":1}]}\n' >span.json
"$PTLOG" convert span.json --to ptl -o span.ptl && "$PTLOG" info span.ptl >"$T/out"
grep -q '^time span: .*(10000000.000000123 s)$' "$T/out" && ok || bad "time span: $(grep 'time span' "$T/out")"

finish
