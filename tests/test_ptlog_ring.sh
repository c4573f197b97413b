#!/bin/bash
# ptlog on LOOP (ring) logs: a ring cut short is reported by verify and dump
# (exit 1, "ring ends early"); a LOOP log cut in the zeros before its ring
# is not clean (verify: NOT CLOSED, exit 1); a ring read from a pipe is copied to an
# unlinked temporary file in $TMPDIR and reads exactly as from the file, for
# every command; PTLOG_SPOOL_LIMIT bounds that copy; sequential logs from a
# pipe are still streamed (no temporary file).
. "$(dirname "$0")/ptlog/lib.sh"
cp "$SRC/samples/golden/loop.ptl" loop.ptl
size=$(stat -c %s loop.ptl)

# The golden ring is complete (it wrapped; its last segment ends with PADDING).
expect_rc 0 "complete ring verifies" "$PTLOG" verify loop.ptl
grep -q '^result: OK$' "$T/out" && ok || bad "complete ring: $(cat "$T/out")"

# Cut short: the geometry (ring_offset 4160 + 2 x 4096) ends at 12352.
head -c 6000 loop.ptl >cut.ptl
expect_rc 1 "cut ring: verify" "$PTLOG" verify cut.ptl
grep -q '^problem: offset 6000: ring ends early: file shorter than its geometry, up to 6352 bytes missing (0 bytes skipped, TRACELOG_E_TRUNCATED)$' "$T/out" &&
    ok || bad "cut ring: verify output: $(cat "$T/out")"
grep -q '^result: DAMAGED' "$T/out" && ok || bad "cut ring: verify says $(grep result "$T/out")"
grep -q '^shutdown: not closed' "$T/out" && ok || bad "cut ring: still clean: $(grep shutdown "$T/out")"
expect_rc 1 "cut ring: dump" "$PTLOG" dump cut.ptl
expect_err '^ptlog: cut.ptl: warning: at offset 6000: ring ends early: file shorter than its geometry, up to 6352 bytes missing \(TRACELOG_E_TRUNCATED\)$' "cut ring: dump warning"
n=$(wc -l <"$T/out")
all=$(wc -l <"$SRC/samples/golden/loop.dump")
[ "$n" -gt 0 ] && [ "$n" -lt "$all" ] && ok || bad "cut ring: dump printed $n of $all events"
expect_rc 1 "cut ring: convert" "$PTLOG" convert cut.ptl --to jsonl -o cut.jsonl
[ -s cut.jsonl ] && ok || bad "cut ring: convert wrote nothing"

# A LOOP log on its first lap cut inside the zeros between the durable region's last block and
# the ring (issue 24: `head -c 200000` of a 64 MiB LOOP log): nothing in the file is damaged, but
# it has no trailer, so it is not clean (spec 8.6) and verify must not say OK: exit 1, "result:
# NOT CLOSED", one message. Cut exactly after the last durable block, one byte after it, in the
# middle of the zeros, at 200000, one byte before the ring and at the ring's start. A cut a few
# bytes into the ring is a torn tail (DAMAGED, exit 1).
SAMPLES=${TL_BUILD_DIR:?set TL_BUILD_DIR}/samples
"$SAMPLES/flight_recorder" fr.ptl 64 0.02 >/dev/null 2>&1 || bad "flight_recorder failed"
expect_rc 0 "flight_recorder's LOOP log verifies" "$PTLOG" verify fr.ptl
grep -q '^result: OK$' "$T/out" && ok || bad "flight_recorder's LOOP log: $(cat "$T/out")"
ro=$(od -A n -t u8 -j 48 -N 8 fr.ptl | tr -d ' ')
# The end of the durable region's last block: walk the blocks from offset 64 (spec 4.1: sync
# 8b 42 4c 4b, payload_len at +16, span 32 + align8(payload_len)) up to the zeros.
dend=64
while [ "$(od -A n -t x1 -j "$dend" -N 4 fr.ptl | tr -d ' ')" = 8b424c4b ]; do
    len=$(od -A n -t u4 -j $((dend + 16)) -N 4 fr.ptl | tr -d ' ')
    dend=$((dend + 32 + (len + 7) / 8 * 8))
done
[ "$ro" = 262144 ] && [ "$dend" -gt 64 ] && [ "$dend" -lt 200000 ] && ok ||
    bad "flight_recorder's 64 MiB LOOP log: ring_offset $ro, durable region's blocks end at $dend"
for cut in "$dend" $((dend + 1)) $(((dend + ro) / 2)) 200000 $((ro - 1)) "$ro"; do
    head -c "$cut" fr.ptl >zcut.ptl
    expect_rc 1 "LOOP log cut at $cut (ring at $ro): verify" "$PTLOG" verify zcut.ptl
    grep -q '^result: NOT CLOSED: no trailer; no damage found, 0 events recovered' "$T/out" && ok ||
        bad "LOOP log cut at $cut: verify says: $(cat "$T/out")"
    grep -q '^shutdown: not closed (no trailer)' "$T/out" && ok || bad "LOOP log cut at $cut: $(grep shutdown "$T/out")"
    expect_err '^ptlog: zcut.ptl: not closed: no trailer \(cut short by a crash, a kill or a truncation\)$' \
        "LOOP log cut at $cut: verify's message"
    expect_rc 1 "LOOP log cut at $cut: verify -q" "$PTLOG" verify -q zcut.ptl
    [ -s "$T/out" ] && bad "LOOP log cut at $cut: verify -q printed $(cat "$T/out")" || ok
done
head -c $((ro + 16)) fr.ptl >zcut.ptl
expect_rc 1 "LOOP log cut 16 bytes into its ring: verify" "$PTLOG" verify zcut.ptl
grep -q '^result: DAMAGED' "$T/out" && ok || bad "LOOP log cut 16 bytes into its ring: $(cat "$T/out")"

# From a pipe: the same output as from the file, for every command.
mkdir spool
export TMPDIR=$T/spool
"$PTLOG" dump loop.ptl >file.dump
run bash -c "cat loop.ptl | '$PTLOG' dump -"
[ "$RC" = 0 ] && ok || bad "dump - of a ring: exit $RC: $(cat "$T/err")"
expect_same "dump - of a ring" file.dump "$T/out"
for cmd in "info" "info --json" "verify" "convert --to jsonl" "convert --to chrome" "dump --begin +1s"; do
    "$PTLOG" $cmd loop.ptl >file.out 2>&1
    run bash -c "cat loop.ptl | '$PTLOG' $cmd - 2>&1 | sed 's/<stdin>/loop.ptl/g'"
    expect_same "$cmd - of a ring" file.out "$T/out"
done
run bash -c "cat loop.ptl | '$PTLOG' filter --event 'file:*' - -o f.ptl"
[ "$RC" = 0 ] && ok || bad "filter - of a ring: exit $RC: $(cat "$T/err")"
"$PTLOG" dump --event 'file:*' loop.ptl >want.txt
"$PTLOG" dump f.ptl >got.txt
expect_same "filter - of a ring" want.txt got.txt
run bash -c "cat loop.ptl | '$PTLOG' merge - loop.ptl -o m.ptl"
[ "$RC" = 0 ] && ok || bad "merge with a ring on a pipe: exit $RC: $(cat "$T/err")"
[ "$("$PTLOG" dump m.ptl | wc -l)" = $((2 * all)) ] && ok || bad "merge with a ring on a pipe: wrong event count"
# Bytes after the geometry are not part of the log (as in a file) and are not copied.
run bash -c "{ cat loop.ptl; head -c 1000000 /dev/zero; } | '$PTLOG' dump -"
expect_same "ring with bytes after its geometry" file.dump "$T/out"

# The copy has no name: nothing appears in TMPDIR, even while ptlog runs; the process holds it open.
{ cat loop.ptl; sleep 1; } | "$PTLOG" dump - >slow.out 2>&1 &
pid=$!
sleep 0.4
held=$(ls -l "/proc/$pid/fd" 2>/dev/null | grep -c "$T/spool")
listed=$(ls -A spool | wc -l)
wait $pid
[ "$held" = 1 ] && ok || bad "ptlog holds $held temporary files in \$TMPDIR while reading a ring from a pipe"
[ "$listed" = 0 ] && ok || bad "a temporary file is visible in \$TMPDIR: $(ls -A spool)"
[ -z "$(ls -A spool)" ] && ok || bad "temporary files left in \$TMPDIR: $(ls -A spool)"
expect_same "slow pipe" file.dump slow.out

# Errors: the limit, a bad limit, no temporary directory.
run bash -c "cat loop.ptl | PTLOG_SPOOL_LIMIT=8K '$PTLOG' dump -"
[ "$RC" = 3 ] && ok || bad "ring above PTLOG_SPOOL_LIMIT: exit $RC"
expect_err '^ptlog: <stdin>: a LOOP log read from a pipe is copied to a temporary file first, and this one is larger than PTLOG_SPOOL_LIMIT \(8192 bytes\)' "spool limit"
run bash -c "cat loop.ptl | PTLOG_SPOOL_LIMIT=$size '$PTLOG' dump -"
expect_same "ring exactly at PTLOG_SPOOL_LIMIT" file.dump "$T/out"
run bash -c "cat loop.ptl | PTLOG_SPOOL_LIMIT=4Q '$PTLOG' dump -"
[ "$RC" = 2 ] && ok || bad "bad PTLOG_SPOOL_LIMIT: exit $RC"
expect_err "^ptlog: PTLOG_SPOOL_LIMIT: expected a size in bytes such as 1048576 or 4G, not '4Q'$" "bad PTLOG_SPOOL_LIMIT"
run bash -c "cat loop.ptl | TMPDIR=$T/missing '$PTLOG' dump -"
[ "$RC" = 5 ] && ok || bad "no temporary directory: exit $RC"
expect_err "^ptlog: <stdin>: cannot create a temporary file in $T/missing for a LOOP log read from a pipe: No such file or directory$" "no temporary directory"

# A sequential log from a pipe is streamed: no temporary file is needed.
make_small
"$PTLOG" dump small.ptl >small.txt
run bash -c "cat small.ptl | TMPDIR=$T/missing '$PTLOG' dump -"
[ "$RC" = 0 ] && ok || bad "sequential log from a pipe without TMPDIR: exit $RC: $(cat "$T/err")"
expect_same "sequential log from a pipe" small.txt "$T/out"

finish
