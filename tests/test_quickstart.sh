#!/bin/bash
# README.md's Quick start stays true: its test command is the one .ci/run
# runs (literally), its first command builds what it runs, and the demo it
# runs records typed events on several threads that dump, info and the
# Perfetto conversion show.
. "$(dirname "$0")/ptlog/lib.sh"

quick=$(sed -n '/^## Quick start/,/^```$/p' "$SRC/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d')
[ "$(printf '%s\n' "$quick" | wc -l)" = 2 ] && ok || bad "the Quick start is not two commands: $quick"
first=$(printf '%s\n' "$quick" | sed -n 1p) second=$(printf '%s\n' "$quick" | sed -n 2p)
grep -qxF -- "$second" "$SRC/.ci/run" && ok || bad ".ci/run does not run the Quick start's test command: $second"
# The first command builds the targets it then runs, with the second's flags (nothing is built twice).
case $first in
*"cmake --build build -j2 --target ptlog demo && build/samples/demo demo.ptl && build/tools/ptlog "*) ok ;;
*) bad "the first command does not build what it runs: $first" ;;
esac
[ "${first#*cmake -S . -B build -DTL_WERROR=ON &&}" != "$first" ] && [ "${second#cmake -S . -B build -DTL_WERROR=ON &&}" != "$second" ] &&
    ok || bad "the two commands configure build differently"

expect_rc 0 "demo" "$TL_BUILD_DIR/samples/demo" demo.ptl
expect_rc 0 "dump" "$PTLOG" dump demo.ptl
grep -Eq ' request:begin \{ id = [0-9]+, method = (GET|POST|DELETE), path = "/' "$T/out" && ok || bad "dump shows no typed request:begin"
workers=$(grep ' request:end { ' "$T/out" | awk '{print $3}' | sort -u | wc -l)
[ "$workers" = 3 ] && ok || bad "requests on $workers threads, want 3"
[ "$(grep -c ' request:begin ' "$T/out")" = 18 ] && [ "$(grep -c ' request:end ' "$T/out")" = 18 ] && ok || bad "not 18 requests"
expect_rc 0 "info --threads" "$PTLOG" info --threads demo.ptl
grep -q '^shutdown: *clean' "$T/out" && ok || bad "info: not clean: $(grep shutdown "$T/out")"
[ "$(sed -n '/^threads:$/,$p' "$T/out" | grep -c '^ *[0-9]')" = 4 ] && ok || bad "info --threads: not 4 threads"
expect_rc 0 "to perfetto" "$PTLOG" convert demo.ptl --to perfetto -o demo.pftrace

finish
