#!/bin/bash
# Command-line edges: times given to --begin/--end are checked against the
# calendar (month lengths, leap years; 24:00 and second 60 by the documented
# rules), and --help / --version report a failed write (exit 4).
. "$(dirname "$0")/ptlog/lib.sh"

# Events around midnight and around a leap-second position.
cat >t.jsonl <<'J'
{"ts":1714607999500000000,"id":1,"name":"before_midnight"}
{"ts":1714608000000000000,"id":1,"name":"before_midnight"}
{"ts":1714608000500000000,"id":2,"name":"after_midnight"}
{"ts":1483228799500000000,"id":3,"name":"leap_eve"}
{"ts":1483228800000000000,"id":4,"name":"new_year"}
J
"$PTLOG" convert t.jsonl --to ptl -o t.ptl

# accept TIME DESC: --begin TIME is a valid time.
accept() {
    expect_rc 0 "$2: $1" "$PTLOG" dump --begin "$1" --limit 1 t.ptl
}
# refuse TIME DESC: exit 2 naming the argument.
refuse() {
    expect_rc 2 "$2: $1" "$PTLOG" dump --begin "$1" t.ptl
    expect_err "^ptlog: --begin: '$(printf '%s' "$1" | sed 's/[.+]/\\&/g')' is not a time" "$2: $1"
    expect_rc 2 "$2 (--end): $1" "$PTLOG" dump --end "$1" t.ptl
}
# Relative times past 2^64 ns are no time (they once wrapped around and selected everything).
refuse +18446744073.709551616s "relative, 2^64 ns"
refuse +99999999999999999999ns "relative, 10^20 ns"
refuse +307445734561825861m "relative, minutes past 2^64 ns"
accept +18446744073.709551615s "relative, 2^64 - 1 ns"
refuse 2026-02-30T00:00:00Z "February 30"
refuse 2023-02-29T00:00:00Z "February 29 of a common year"
refuse 1900-02-29 "February 29 of 1900 (not a leap year)"
accept 2000-02-29 "February 29 of 2000 (a leap year)"
accept 2024-02-29T12:00:00Z "February 29 of 2024"
refuse 2024-04-31 "April 31"
refuse 2024-06-31T00:00:00Z "June 31"
accept 2024-01-31T00:00:00Z "January 31"
refuse 2024-13-01 "month 13"
refuse 2024-00-10 "month 0"
refuse 2024-05-00 "day 0"
refuse 2024-05-01T12:60:00Z "minute 60"
refuse 2024-05-01T25:00:00Z "hour 25"
refuse 2024-05-01T24:00:01Z "24:00:01"
refuse 2024-05-01T24:01Z "24:01"
refuse 2024-05-01T24:00:00.5Z "24:00:00.5"
refuse 2024-05-01T12:00:61Z "second 61"
refuse 2024-05-01T12:00:60Z "second 60 outside 23:59 UTC"
refuse 2016-12-31T23:58:60Z "second 60 at 23:58"
refuse 2016-12-31T23:59:60+01:00 "second 60 at 22:59 UTC"
accept 2017-01-01T00:59:60+01:00 "second 60 at 23:59 UTC, written in +01:00"
refuse 2024-05-01T12:00:00+24:00 "offset of 24 hours"
refuse 2024-05-01T12:00:00+05:60 "offset minute 60"
accept 2024-05-01T12:00:00+23:59 "largest offset"
refuse 2024-05-01T12:00.5Z "fraction without seconds"
refuse 2024-05-01T12:00:00.1234567890Z "ten fraction digits"
refuse 1969-12-31T23:59:59Z "before the epoch"

# What the edge cases mean: 24:00 is the next day's 00:00; 23:59:60 the second after 23:59:59.
"$PTLOG" dump --relative t.ptl >all.txt
for pair in "2024-05-01T24:00Z 2024-05-02T00:00:00Z" "2024-05-01T24:00:00Z 2024-05-02" \
    "2016-12-31T23:59:60Z 2017-01-01T00:00:00Z"; do
    set -- $pair
    expect_rc 0 "--begin $1" "$PTLOG" dump --begin "$1" t.ptl
    cp "$T/out" a.txt
    expect_rc 0 "--begin $2" "$PTLOG" dump --begin "$2" t.ptl
    expect_same "$1 is $2" a.txt "$T/out"
done
expect_rc 0 "--end 24:00" "$PTLOG" dump --end 2024-05-01T24:00Z --event before_midnight t.ptl
[ "$(wc -l <"$T/out")" = 1 ] && ok || bad "--end 2024-05-01T24:00Z (exclusive) keeps $(wc -l <"$T/out") of the events before midnight"
expect_rc 0 "--end at the leap second" "$PTLOG" dump --end 2016-12-31T23:59:60Z --event 'leap_eve' --event 'new_year' t.ptl
grep -q leap_eve "$T/out" && ! grep -q new_year "$T/out" && ok || bad "--end 23:59:60Z: $(cat "$T/out")"

# --help and --version check their write: a full disk is exit 4 with a message.
if [ -w /dev/full ] && [ -c /dev/full ]; then
    for args in --help -h --version -V help "help dump" "dump --help" "info --help"; do
        expect_rc 4 "ptlog $args >/dev/full" bash -c "'$PTLOG' $args >/dev/full"
        expect_err '^ptlog: cannot write to standard output: No space left on device$' "ptlog $args >/dev/full"
    done
    expect_rc 4 "verify >/dev/full" bash -c "'$PTLOG' verify t.ptl >/dev/full"
fi
expect_rc 4 "--version with standard output closed" bash -c "'$PTLOG' --version >&-"
expect_rc 0 "--help to a pipe read whole" bash -c "'$PTLOG' --help | cat >/dev/null"

# -o with an empty name: a usage error (it was exit 4, "ptlog: : cannot write the output").
expect_rc 2 "dump -o ''" "$PTLOG" dump t.ptl -o ''
expect_err "^ptlog: dump: -o: an empty file name" "dump -o '': message"
expect_rc 2 "record -o ''" "$PTLOG" record -o '' -- true
expect_err "^ptlog: record: -o: an empty file name" "record -o '': message"

finish
