#!/usr/bin/env bash
# The golden sample logs: their dumps, warnings and exit codes are pinned, and
# the generator still reproduces the same content. samples/golden/ holds the
# format 1.0 logs of tracelog 0.1.0 (kept forever: they are read as they were),
# samples/golden/1.1/ the same logs as today's writer writes them.
# Dumps are taken with --hex (every payload raw, system events' too), the
# reader's exact output, so that they stay pinned whatever dump decodes.
set -u
golden="$TL_SOURCE_DIR/samples/golden"
make_golden="$TL_BUILD_DIR/samples/make_golden"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # description, command...
    local what=$1; shift
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $what"; fi
}

for dir in "$golden" "$golden/1.1"; do
    names="append until_full loop cut_short damaged"
    [ "$dir" = "$golden" ] || names="$names threads" # kernel thread ids are format 1.1 only
    for name in $names; do
        what="${dir#"$golden"}/$name"
        (cd "$dir" && "$PTLOG" dump --hex "$name.ptl" > "$tmp/$name.dump" 2> "$tmp/$name.stderr"; echo $? > "$tmp/$name.exit")
        check "$what: dump output" diff -u "$dir/$name.dump" "$tmp/$name.dump"
        check "$what: warnings" diff -u "$dir/$name.stderr" "$tmp/$name.stderr"
        check "$what: exit status" diff -u "$dir/$name.exit" "$tmp/$name.exit"
    done
done
# The format 1.0 and 1.1 logs of the same APPEND program hold the same events.
check "append: same events in 1.0 and 1.1" diff -u "$golden/append.dump" "$golden/1.1/append.dump"

mkdir "$tmp/regen"
check "make_golden runs" "$make_golden" "$tmp/regen"
for name in append until_full loop cut_short damaged threads; do
    (cd "$tmp/regen" && "$PTLOG" dump --hex "$name.ptl" > "$tmp/regen/$name.dump" 2> /dev/null)
    check "$name: regenerated log has the same content" diff -u "$golden/1.1/$name.dump" "$tmp/regen/$name.dump"
done

# The typed sample (samples/typed.c) records through the POSIX interface, so
# times, pids and threads differ from run to run: what is pinned is each
# event's name and payload (dump columns 4 on, after the kernel tid if any) and the analyzer's per-field
# statistics (its indented lines), decoded through the schemas in the log.
"$TL_BUILD_DIR/samples/typed" "$tmp/typed.ptl"
check "typed sample runs" test $? -eq 0
# (time, pid, thread, its kernel tid and name vary from run to run: cut off)
"$PTLOG" dump --no-system "$tmp/typed.ptl" | sed -E 's/^[^ ]+ [^ ]+ [^ ]+ (tid [0-9]+ )?(\([^)]*\) )?//' > "$tmp/typed.dump"
check "typed: dump names and payloads" diff -u "$golden/typed.dump" "$tmp/typed.dump"
"$TL_BUILD_DIR/samples/offline_analyzer" "$tmp/typed.ptl" | grep '^    ' > "$tmp/typed.fields"
check "typed: offline_analyzer per-field statistics" diff -u "$golden/typed.fields" "$tmp/typed.fields"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
