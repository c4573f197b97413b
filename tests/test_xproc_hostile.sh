#!/bin/bash
# A hostile traced program against its controller (issue 24; docs/design/
# cross-process.md section 9). tests/hostile/hostile_traced.c records events
# and, while ptlog drains them, scribbles over everything it shares with
# ptlog (or cuts to 0 bytes): the stream buffer (random words, header, lane counters, record
# stamps and sizes, futex and semaphore words), its name map (lock word,
# count, names) and its control object. For each mode, ended by exit() and
# by SIGKILL, ptlog (run under ASan in CI's sanitizer build) must:
# - finish within a bound (it hung for ever on scribbled counters, stamps,
#   and records never committed);
# - never crash, report a sanitizer error or say anything (-q) but, in mode
#   names, the warning that the program's name map was refused;
# - write a log that verify reads, that ends with tracelog_process_end, whose
#   stamps lie within the run (a marker once came a day in the future) and
#   whose overrun count is a count (one read 6398208350207023007).
# And `ptlog attach --event/--exclude` (which registers names in the traced
# process's name map) on a program scribbling over that map's lock, and
# `ptlog attach` on one that writes SUSPENDED into its stream's state.
. "$(dirname "$0")/ptlog/lib.sh"
HOSTILE=${TL_BUILD_DIR:?set TL_BUILD_DIR}/tests/hostile_traced
SECONDS_EACH=1.5
# The program's own faults are its business (its scribbles break its own producers): under a
# sanitizer build they end it as a plain crash would, its reports go to hostile.err, and ptlog's
# stderr holds ptlog's alone.
HOSTILE_ENV="env ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=0"
BOUND=60 # seconds: ptlog must be done by then (the program runs 1.5 s)

# check_log DESC LOG START END: the log reads, ends with the process's end, its figures are sane, and
# every event's time lies within [START - 1 s, END + 1 s] (info's time span is the least and greatest
# of every event's time; ISO text compares in order).
check_log() {
    local desc=$1 log=$2 v overruns lo hi span
    "$PTLOG" verify -q "$log" >"$T/verify" 2>&1
    v=$?
    { [ "$v" = 0 ] || [ "$v" = 1 ]; } && ok || bad "$desc: verify exit $v: $(head -c 300 "$T/verify")"
    "$PTLOG" dump "$log" 2>/dev/null | tail -1 | grep -q 'tracelog_process_end' && ok ||
        bad "$desc: the log does not end with the program's end: $("$PTLOG" dump "$log" 2>&1 | tail -1)"
    "$PTLOG" info "$log" >"$T/info" 2>/dev/null
    lo=$(date -u -d "@$(($3 - 1))" +%Y-%m-%dT%H:%M:%S)
    hi=$(date -u -d "@$(($4 + 1))" +%Y-%m-%dT%H:%M:%S)
    span=$(sed -n 's/^time span: *\([^ ]*\) \.\. \([^ ]*\) .*/\1 \2/p' "$T/info")
    awk -v lo="$lo" -v hi="$hi" -v span="$span" 'BEGIN { n = split(span, t, " ")
        exit !(n == 2 && substr(t[1], 1, 19) >= lo && substr(t[2], 1, 19) <= hi) }' && ok ||
        bad "$desc: events from ${span:-?} outside the run ($lo .. $hi)"
    overruns=$(sed -n 's/^status:.*stream overruns \([0-9]*\),.*/\1/p' "$T/info")
    [ -n "$overruns" ] && [ "${#overruns}" -le 15 ] && ok || bad "$desc: stream overruns '${overruns}' is no count"
}

# no_sanitizer_report DESC: ptlog's stderr ($T/err) has no sanitizer report.
no_sanitizer_report() {
    if grep -Eq 'Sanitizer|runtime error' "$T/err"; then bad "$1: $(grep -E -m3 'Sanitizer|runtime error|#[0-9] ' "$T/err")"; else ok; fi
}

for end in exit kill; do
    for mode in none random header counters timestamps sizes skips locks names ctl cut-names cut-ctl cut-table; do
        desc="record, $mode, $end"
        start=$(date +%s)
        timeout -s KILL "$BOUND" "$PTLOG" record -q --stream-size 1M -o "$mode.$end.ptl" -- \
            sh -c 'exec "$@" 2>>hostile.err' sh $HOSTILE_ENV "$HOSTILE" "$mode" "$SECONDS_EACH" "$end" \
            >"$T/out" 2>"$T/err"
        rc=$?
        finish=$(date +%s)
        # The program's status, whatever its scribbles made of it (ptlog passes it on): ptlog's own
        # word is its stderr, which must be empty (-q) but for the warning that the program's name map
        # was refused (mode names: a scribbled header no longer names the process), and the log.
        if [ "$mode" = names ]; then
            said=$(grep -cv '^ptlog: record: warning: the program.s event-name map ' "$T/err")
        else
            said=$(wc -c <"$T/err")
        fi
        [ "$said" = 0 ] && ok || bad "$desc: ptlog exit $rc, said: $(head -c 300 "$T/err")"
        [ "$((finish - start))" -lt "$BOUND" ] && ok || bad "$desc: ptlog ran $((finish - start)) s (hung)"
        no_sanitizer_report "$desc"
        [ "$mode" = none ] && [ "$end" = exit ] && { [ "$rc" = 0 ] && ok || bad "$desc: the reference run exited $rc"; }
        check_log "$desc" "$mode.$end.ptl" "$start" "$finish"
    done
done

# attach with --event/--exclude: the controller registers names in the traced process's map
# while the process scribbles over the map's lock (it took the controller's memory once).
for round in 1 2 3; do
    desc="attach --event, names, round $round"
    $HOSTILE_ENV "$HOSTILE" names 3 2>>hostile.err &
    pid=$!
    for _ in $(seq 100); do [ -e "/dev/shm/tracelog.$(id -u).$pid" ] && break; sleep 0.02; done
    start=$(date +%s)
    timeout -s KILL "$BOUND" "$PTLOG" attach -q --event zzz --event a1 --event a2 --exclude b1 "$pid" \
        -o "attach.$round.ptl" >"$T/out" 2>"$T/err"
    rc=$?
    finish=$(date +%s)
    wait "$pid"
    # 0, or 3 with a message when the lock was held by garbage past the bound (EAGAIN): never a crash.
    case $rc in
    0) check_log "$desc" "attach.$round.ptl" "$start" "$finish" ;;
    3) grep -q 'cannot' "$T/err" && ok || bad "$desc: exit 3 without a message" ;;
    *) bad "$desc: ptlog exit $rc: $(head -c 300 "$T/err")" ;;
    esac
    no_sanitizer_report "$desc"
done

# attach to a program that writes SUSPENDED into its stream's state word: ptlog goes on until the
# program ends (it once took the word for the end, and stopped at once with a log that had no end).
desc="attach, the state word scribbled"
$HOSTILE_ENV "$HOSTILE" suspend 2 2>>hostile.err &
pid=$!
for _ in $(seq 100); do [ -e "/dev/shm/tracelog.$(id -u).$pid" ] && break; sleep 0.02; done
start=$(date +%s)
timeout -s KILL "$BOUND" "$PTLOG" attach -q "$pid" -o suspend.ptl >"$T/out" 2>"$T/err"
rc=$?
finish=$(date +%s)
wait "$pid"
[ "$rc" = 0 ] && ok || bad "$desc: ptlog exit $rc: $(head -c 300 "$T/err")"
check_log "$desc" suspend.ptl "$start" "$finish"
no_sanitizer_report "$desc"

# A program that reserves records it never commits, in every lane twice a second (mode stall): each
# drain waited for them spinning with sched_yield, 9 s of ptlog's CPU in a 6 s run (1 s with the
# waits that sleep; the program's own CPU: none).
desc="record, stall"
start=$(date +%s)
TIMEFORMAT='%U %S'
{ time timeout -s KILL "$BOUND" "$PTLOG" record -q -o stall.ptl -- \
    sh -c 'exec "$@" 2>>hostile.err' sh $HOSTILE_ENV "$HOSTILE" stall 6 >"$T/out" 2>"$T/err"; } 2>"$T/time"
rc=$?
[ "$rc" = 0 ] && ok || bad "$desc: ptlog exit $rc: $(head -c 300 "$T/err")"
read -r user sys <"$T/time"
echo "$desc: ptlog used ${user:-?} s user + ${sys:-?} s system in 6 s"
awk -v u="$user" -v s="$sys" 'BEGIN { exit !(u + s < 4) }' && ok || bad "$desc: ptlog used $user + $sys s of CPU"
check_log "$desc" stall.ptl "$start" "$(date +%s)"
no_sanitizer_report "$desc"

# A program that cuts to 0 bytes every name map its controller builds for it, as soon as it appears
# under its private ".new." name: the controller stored the map's header through an unguarded
# mapping and died of SIGBUS (1 run of 3 of this record, 2 of 3 of a root attach of a program run as nobody).
NAMES_RACE=$TL_BUILD_DIR/tests/names_race
race_check() { # DESC LOG RC START FINISH: ptlog lived, and wrote a log that ends as the program did
    [ "$3" = 0 ] && ok || bad "$1: ptlog exit $3: $(head -c 300 "$T/err")"
    grep -v '^ptlog: [a-z]*: warning: the program.s event-name map ' "$T/err" | grep -q . &&
        bad "$1: ptlog said: $(head -c 300 "$T/err")" || ok
    no_sanitizer_report "$1"
    check_log "$1" "$2" "$4" "$5"
}
for round in 1 2 3; do
    start=$(date +%s)
    timeout -s KILL "$BOUND" "$PTLOG" record -q -o race.$round.ptl -- \
        sh -c 'exec "$@" 2>>hostile.err' sh $HOSTILE_ENV "$NAMES_RACE" 3 >"$T/out" 2>"$T/err"
    race_check "record, name maps cut, round $round" race.$round.ptl $? "$start" "$(date +%s)"
done
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
    for round in 1 2; do
        mkdir -p nobody && chown nobody nobody
        (cd nobody && exec setpriv --reuid=nobody --regid=nogroup --clear-groups $HOSTILE_ENV "$NAMES_RACE" 3 \
            2>>../hostile.err) &
        pid=$!
        for _ in $(seq 100); do [ -e "/dev/shm/tracelog.$(id -u nobody).$pid" ] && break; sleep 0.02; done
        start=$(date +%s)
        timeout -s KILL "$BOUND" "$PTLOG" attach -q "$pid" -o race-root.$round.ptl >"$T/out" 2>"$T/err"
        rc=$?
        wait "$pid"
        race_check "root attach of nobody, name maps cut, round $round" race-root.$round.ptl $rc "$start" "$(date +%s)"
    done
fi

# Another user squats the names it can guess for the next pids (issue 24 item 5; root only: it
# makes files owned by nobody). The name map's name holds a random nonce now: the log keeps every
# name.
SAMPLES=$TL_BUILD_DIR/samples
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    uid=$(id -u)
    squat() { # SUFFIX: files /dev/shm/tracelog.$uid.<pid>SUFFIX for the next 400 pids, owned by nobody
        local next p
        next=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
        for p in $(seq "$next" $((next + 400))); do
            f=/dev/shm/tracelog.$uid.$p$1
            [ -e "$f" ] || { : >"$f" && chown nobody "$f" && chmod 600 "$f" && echo "$f" >>squatted.txt; }
        done
    }
    squat .names
    expect_rc 0 "record with the names squatted" "$PTLOG" record -q -o squat.ptl -- "$SAMPLES/record" squat-own.ptl 20
    n=$("$PTLOG" dump squat.ptl | grep -c ' request:begin ')
    [ "$n" -gt 0 ] && ok || bad "names squatted: the log names no request:begin"
    "$PTLOG" dump squat.ptl | grep -q 'event#' && bad "names squatted: unnamed events: $("$PTLOG" dump squat.ptl | grep -m1 'event#')" || ok
    xargs rm -f <squatted.txt
fi

finish
