#!/bin/bash
# Outputs that would destroy data: -o naming an input (directly, through a
# symbolic or a hard link, any input of merge, standard input and output
# too, --follow too) is a usage error before anything is written; -o naming
# a descriptor writes to it; a .ptl log on standard output must start its
# file; a replaced file keeps its mode; an interrupted run
# (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1) leaves no
# OUT.tmp.XXXXXX behind and dies by that signal; an output over
# RLIMIT_FSIZE is exit 4.
. "$(dirname "$0")/ptlog/lib.sh"
make_small
cp small.ptl orig.ptl
"$PTLOG" convert small.ptl --to jsonl -o small.jsonl
cp small.jsonl orig.jsonl

# expect_refused DESC CMD...: exit 2 with the usage message, the logs intact, no temporary file.
expect_refused() {
    local desc=$1
    shift
    expect_rc 2 "$desc" "$@"
    expect_err "is the input .*\(the same file\)" "$desc"
    expect_same "$desc: small.ptl intact" orig.ptl small.ptl
    expect_same "$desc: small.jsonl intact" orig.jsonl small.jsonl
    if ls ./*.tmp.* >/dev/null 2>&1; then bad "$desc: temporary file $(ls ./*.tmp.*)"; else ok; fi
}

expect_refused "filter -o the input" "$PTLOG" filter small.ptl --event 'request:*' -o small.ptl
expect_err "^ptlog: filter: the output small.ptl is the input small.ptl \(the same file\); write to another file" \
    "filter message"
expect_refused "dump -o the input" "$PTLOG" dump small.ptl -o small.ptl
expect_refused "dump --output=the input" "$PTLOG" dump --output=small.jsonl small.jsonl
expect_refused "convert to the same file" "$PTLOG" convert small.jsonl --to jsonl -o small.jsonl
expect_refused "convert to ptl over its input" "$PTLOG" convert small.ptl --to ptl -o ./small.ptl
expect_refused "info -o the input" "$PTLOG" info small.ptl -o small.ptl
expect_refused "convert --follow -o the input" "$PTLOG" convert --follow small.ptl --to jsonl -o small.ptl
ln -s small.ptl link.ptl
expect_refused "output through a symbolic link" "$PTLOG" filter small.ptl -o link.ptl
expect_refused "input through a symbolic link" "$PTLOG" filter link.ptl -o small.ptl
# An output named through a symbolic link is written to the file the link
# points to, as a shell's > would: the link stays a link (it was replaced by
# a regular file before), a dangling link's target is created, and a relative
# target is taken from the link's own directory.
"$PTLOG" convert small.ptl --to jsonl -o target.jsonl
: > target.jsonl
ln -s target.jsonl out-link.jsonl
expect_rc 0 "write through a link" "$PTLOG" convert small.ptl --to jsonl -o out-link.jsonl
[ -L out-link.jsonl ] && ok || bad "write through a link: the link was replaced"
expect_same "write through a link: target written" orig.jsonl target.jsonl
mkdir -p sub
ln -s ../dangling.jsonl sub/dangling-link.jsonl
expect_rc 0 "write through a dangling link" "$PTLOG" convert small.ptl --to jsonl -o sub/dangling-link.jsonl
[ -L sub/dangling-link.jsonl ] && ok || bad "dangling link replaced"
expect_same "dangling link: its target created" orig.jsonl dangling.jsonl
ln -s loop-b.jsonl loop-a.jsonl
ln -s loop-a.jsonl loop-b.jsonl
expect_rc 4 "a link loop" "$PTLOG" convert small.ptl --to jsonl -o loop-a.jsonl
expect_err "loop-a.jsonl: cannot open the output: Too many levels of symbolic links" "link loop message"
[ -L loop-a.jsonl ] && ok || bad "link loop: the link was replaced"
ln small.ptl hard.ptl
expect_refused "output is a hard link of the input" "$PTLOG" convert small.ptl --to ptl -o hard.ptl
"$PTLOG" convert small.ptl --to ptl -o other.ptl
expect_refused "merge: the output is the second input" "$PTLOG" merge other.ptl small.ptl -o small.ptl
expect_refused "merge: the output is the first input" "$PTLOG" merge small.ptl other.ptl -o small.ptl
expect_refused "merge: an input is a link of the output" "$PTLOG" merge other.ptl hard.ptl -o small.ptl
run bash -c "'$PTLOG' filter - -o small.ptl <small.ptl"
[ "$RC" = 2 ] && ok || bad "standard input is the output file: exit $RC"
expect_same "stdin: small.ptl intact" orig.ptl small.ptl
run bash -c "'$PTLOG' convert small.jsonl --to jsonl >>small.jsonl"
[ "$RC" = 2 ] && ok || bad "standard output appended to the input: exit $RC"
grep -q "standard output is the input small.jsonl" "$T/err" && ok || bad "stdout message: $(cat "$T/err")"
expect_same "stdout: small.jsonl intact" orig.jsonl small.jsonl
# Not the same file: allowed (a copy, a device, a new name).
expect_rc 0 "output is a copy of the input" "$PTLOG" filter small.ptl -o other.ptl
expect_rc 0 "output /dev/null" "$PTLOG" convert small.ptl --to jsonl -o /dev/null
expect_rc 0 "dump to standard output" "$PTLOG" dump small.ptl

# -o naming a descriptor (/dev/stdout, /dev/fd/N) writes to that descriptor, as - does: it once
# followed the link to the file the shell opened and replaced it, losing what was written before.
echo journal >journal.txt
run bash -c "'$PTLOG' dump small.ptl -o /dev/stdout >>journal.txt"
[ "$RC" = 0 ] && [ "$(head -1 journal.txt)" = journal ] && [ "$(wc -l <journal.txt)" -gt 2 ] && ok ||
    bad "-o /dev/stdout >> journal: exit $RC, journal.txt begins '$(head -1 journal.txt)'"
run bash -c "{ echo head; '$PTLOG' dump small.ptl -o /dev/fd/3 3>&1; echo foot; } >fd3.txt"
[ "$RC" = 0 ] && [ "$(head -1 fd3.txt)" = head ] && [ "$(tail -1 fd3.txt)" = foot ] && ok ||
    bad "-o /dev/fd/3: exit $RC, fd3.txt: $(head -1 fd3.txt) ... $(tail -1 fd3.txt)"
# A .ptl log on standard output must start its file: appended to one (>>), or written past what a
# { ...; } group wrote, it is refused (exit 4) and nothing is lost (the writer truncated it).
echo precious >keep.txt
run bash -c "'$PTLOG' convert small.ptl --to ptl -o - >>keep.txt"
[ "$RC" = 4 ] && [ "$(cat keep.txt)" = precious ] && ok || bad ".ptl >> a file: exit $RC, the file: $(head -c 80 keep.txt)"
grep -q 'a .ptl log starts its file' "$T/err" && ok || bad ".ptl >> a file: message $(cat "$T/err")"
run bash -c "{ echo head; '$PTLOG' filter small.ptl -o -; echo foot; } >group.txt"
[ "$(cat group.txt)" = "$(printf 'head\nfoot')" ] && ok || bad ".ptl after a group's line: $(head -c 80 group.txt)"
run bash -c "'$PTLOG' convert small.ptl --to ptl -o - >fresh.ptl"
[ "$RC" = 0 ] && ok || bad ".ptl > a file: exit $RC"
expect_rc 0 "the .ptl written to standard output reads" "$PTLOG" verify -q fresh.ptl
# Standard output closed (>&-): no file ptlog opens takes its place (the input log did, and the .ptl
# writer tried to truncate it: "truncate failed: Invalid argument"); the write fails as it is.
run bash -c "'$PTLOG' convert small.ptl --to ptl -o - >&-"
[ "$RC" = 4 ] && grep -q 'Bad file descriptor' "$T/err" && ok || bad "stdout closed: exit $RC: $(cat "$T/err")"
expect_same "stdout closed: small.ptl intact" orig.ptl small.ptl
# Replacing a file keeps its mode: a private file stays private (it became 0644).
echo mine >private.jsonl
chmod 600 private.jsonl
expect_rc 0 "replace a private file" "$PTLOG" convert small.ptl --to jsonl -o private.jsonl
[ "$(stat -c %a private.jsonl)" = 600 ] && ok || bad "the replaced file's mode: $(stat -c %a private.jsonl)"
chmod 4755 private.jsonl # ... but not its set-id bits
expect_rc 0 "replace a setuid file" "$PTLOG" convert small.ptl --to jsonl -o private.jsonl
[ "$(stat -c %a private.jsonl)" = 755 ] && ok || bad "the replaced setuid file's mode: $(stat -c %a private.jsonl)"

# A failure before the temporary file exists removes nothing: a file named like its template stays.
mkdir adir
echo mine >adir.tmp.XXXXXX
expect_rc 4 "output is a directory" "$PTLOG" convert small.ptl --to json -o adir
[ "$(cat adir.tmp.XXXXXX 2>/dev/null)" = mine ] && ok || bad "a failed open removed adir.tmp.XXXXXX"
rm -f adir.tmp.XXXXXX

# ---- interrupted runs --------------------------------------------------------------------------
# The input is a FIFO kept open by this shell: ptlog has created its temporary
# output and waits for more input when the signal comes.
make_many many 20000
set -m # background jobs get their own process group and keep SIGINT at its default
exec 4>&2 2>/dev/null # without the shell's job notices ("Interrupt", "Terminated")
for sig in INT TERM HUP PIPE QUIT USR1; do
    rm -f in.fifo out.ptl
    mkfifo in.fifo
    "$PTLOG" convert --from jsonl in.fifo --to ptl -o out.ptl 2>"err.$sig" &
    pid=$!
    exec 3>in.fifo
    cat many.jsonl >&3
    for _ in $(seq 100); do
        ls out.ptl.tmp.* >/dev/null 2>&1 && break
        sleep 0.05
    done
    ls out.ptl.tmp.* >/dev/null 2>&1 && ok || bad "SIG$sig: no temporary output while converting"
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    exec 3>&-
    want=$((128 + $(kill -l "$sig")))
    [ "$rc" = "$want" ] && ok || bad "SIG$sig: exit status $rc, want $want (killed by the signal)"
    if ls out.ptl.tmp.* >/dev/null 2>&1; then bad "SIG$sig left $(ls -s out.ptl.tmp.*)"; else ok; fi
    [ -e out.ptl ] && bad "SIG$sig: an output file appeared" || ok
    rm -f out.ptl.tmp.*
done
exec 2>&4 4>&-
set +m

# An output over RLIMIT_FSIZE is a write error (exit 4, nothing left), not SIGXFSZ's death (exit 153,
# a temporary file of 100 KB left, found by a review), standard output included.
rm -f big.json big.json.tmp.*
(ulimit -f 8 && exec "$PTLOG" convert many.ptl --to json -o big.json) 2>"$T/err"
rc=$?
[ "$rc" = 4 ] && ok || bad "over RLIMIT_FSIZE: exit $rc, want 4: $(cat "$T/err")"
grep -q 'File too large' "$T/err" && ok || bad "over RLIMIT_FSIZE: message $(cat "$T/err")"
[ -z "$(ls big.json big.json.tmp.* 2>/dev/null)" ] && ok || bad "over RLIMIT_FSIZE: left $(ls big.json*)"
(ulimit -f 8 && exec "$PTLOG" convert many.ptl --to json >big.json) 2>"$T/err"
rc=$?
[ "$rc" = 4 ] && ok || bad "over RLIMIT_FSIZE on standard output: exit $rc, want 4: $(cat "$T/err")"
rm -f big.json

# An output name of 255 bytes, the most a directory takes: its temporary file's name is cut to fit (it
# was OUT.tmp.XXXXXX whole, too long: exit 4, "File name too long").
long=$(printf 'o%.0s' $(seq 250)).json
expect_rc 0 "an output name of 255 bytes" "$PTLOG" convert small.ptl --to json -o "$long"
[ -s "$long" ] && [ -z "$(ls ./*.tmp.* 2>/dev/null)" ] && ok || bad "an output name of 255 bytes: not written, or a temporary file left"
rm -f "$long"

# A signal ignored by the caller (nohup) stays ignored: the run completes.
rm -f in.fifo out.ptl
mkfifo in.fifo
(trap '' HUP && exec "$PTLOG" convert --from jsonl in.fifo --to ptl -o out.ptl) &
pid=$!
exec 3>in.fifo
cat many.jsonl >&3
for _ in $(seq 100); do
    ls out.ptl.tmp.* >/dev/null 2>&1 && break
    sleep 0.05
done
kill -s HUP "$pid"
exec 3>&-
wait "$pid"
rc=$?
[ "$rc" = 0 ] && ok || bad "ignored SIGHUP: exit $rc"
"$PTLOG" dump out.ptl | cmp -s - <("$PTLOG" dump many.ptl) && ok || bad "ignored SIGHUP: output differs"

finish
