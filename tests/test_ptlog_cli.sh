#!/bin/bash
# ptlog command line: help, version, usage errors and the documented exit codes.
. "$(dirname "$0")/ptlog/lib.sh"
make_small

expect_rc 0 "--help" "$PTLOG" --help
grep -q '^Usage: ptlog COMMAND' "$T/out" && ok || bad "--help text"
for code in 0 1 2 3 4 5; do
    grep -q "^  $code  " "$T/out" && ok || bad "--help does not document exit code $code"
done
expect_rc 0 "-h" "$PTLOG" -h
for c in dump info verify convert filter merge; do
    expect_rc 0 "help $c" "$PTLOG" help $c
    grep -q "^Usage: ptlog $c" "$T/out" && ok || bad "help $c"
    cp "$T/out" help.txt
    expect_rc 0 "$c --help" "$PTLOG" $c --help
    expect_same "$c --help == help $c" help.txt "$T/out"
done
expect_rc 0 "--version" "$PTLOG" --version
grep -Eq '^ptlog [0-9]+\.[0-9]+\.[0-9]+ .*format 1\.2$' "$T/out" && ok || bad "--version: $(cat "$T/out")"

# Exit code 2: usage errors, one line each.
expect_rc 2 "no command" "$PTLOG"
expect_err "^ptlog: missing command" "no command"
expect_rc 2 "unknown command" "$PTLOG" frobnicate
expect_err "^ptlog: unknown command 'frobnicate'" "unknown command"
expect_rc 2 "unknown option" "$PTLOG" dump --frob small.ptl
expect_err "^ptlog: dump: unknown option '--frob'" "unknown option"
expect_rc 2 "unknown short option" "$PTLOG" info -z small.ptl
expect_err "^ptlog: info: unknown option '-z'" "unknown short option"
expect_rc 2 "missing argument" "$PTLOG" dump small.ptl --event
expect_err "^ptlog: dump: option '--event' needs an argument" "missing argument"
expect_rc 2 "help of an unknown command" "$PTLOG" help frob

# Exit codes 0, 1, 3, 4 in one place (details in the other test scripts).
expect_rc 0 "0: success" "$PTLOG" dump small.ptl
head -c $(($(stat -c %s small.ptl) - 10)) small.ptl >cut.ptl
expect_rc 1 "1: recovered with loss" "$PTLOG" dump cut.ptl
expect_rc 3 "3: unreadable" "$PTLOG" dump nosuch.ptl
head -c 3 small.ptl >prefix.ptl # a prefix of the magic: a log cut short, not some other file (spec 3.3)
expect_rc 3 "magic prefix" "$PTLOG" dump prefix.ptl
expect_err "truncated" "magic prefix"
expect_rc 4 "4: output error" "$PTLOG" convert small.ptl --to json -o nodir/out.json
# 5 (out of memory) needs a memory limit; run it where ulimit -v works.
if (ulimit -v 40000 && "$PTLOG" --version >/dev/null 2>&1); then
    # one 50 MB event (blanks): more than the memory limit allows
    { printf '{"events":[{'; head -c 50000000 /dev/zero | tr '\0' ' '; printf '"ts":1,"id":1}]}'; } >big.json
    (
        ulimit -v 40000
        "$PTLOG" dump big.json >/dev/null 2>err5.txt
        echo $? >rc5.txt
    )
    if [ "$(cat rc5.txt)" = 5 ]; then
        grep -q '^ptlog: out of memory$' err5.txt && ok || bad "5: message $(cat err5.txt)"
    else
        echo "note: exit 5 not provoked under ulimit -v (exit $(cat rc5.txt))"
    fi
fi

finish
