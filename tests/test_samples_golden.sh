#!/usr/bin/env bash
# The golden sample logs (samples/golden/): their dumps, warnings and exit
# codes are pinned, and the generator still reproduces the same content.
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

for name in append until_full loop cut_short damaged; do
    (cd "$golden" && "$PTLOG" dump --hex "$name.ptl" > "$tmp/$name.dump" 2> "$tmp/$name.stderr"; echo $? > "$tmp/$name.exit")
    check "$name: dump output" diff -u "$golden/$name.dump" "$tmp/$name.dump"
    check "$name: warnings" diff -u "$golden/$name.stderr" "$tmp/$name.stderr"
    check "$name: exit status" diff -u "$golden/$name.exit" "$tmp/$name.exit"
done

mkdir "$tmp/regen"
check "make_golden runs" "$make_golden" "$tmp/regen"
for name in append until_full loop cut_short damaged; do
    (cd "$tmp/regen" && "$PTLOG" dump --hex "$name.ptl" > "$tmp/regen/$name.dump" 2> /dev/null)
    check "$name: regenerated log has the same content" diff -u "$golden/$name.dump" "$tmp/regen/$name.dump"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
