#!/bin/bash
# The composition matrix (issue 26, "a recorded log is a whole log"): the
# same instrumented program (tests/matrix/matrix_prog.c: 3 threads, one named
# with pthread_setname_np, typed and untyped events, a type the path's filter
# removes, ended by exit or by SIGKILL) run along every path a log can take,
# each path's reading (`ptlog convert --to jsonl`) compared with the
# in-process one (own-flush, the reference).
#
# Normalisation (tests/matrix/matrix_norm.c has the details): timestamps,
# pids, pthread_t values and kernel tids dropped, a thread known by the rank
# of its first user event (the program makes its threads appear in a fixed
# order), each thread's events in their order, system events dropped except
# posix_trace_start's filter, the loss markers and tracelog_process_end.
#
# Aspects (columns):
#   run      the path's commands exit as they should (the program, ptlog
#            record 0 or 137, attach 0, the conversions)
#   names    the user event types and every user event's name
#   ids      the same with their ids
#   fields   every user event's payload bytes and decoded fields; the schemas
#   threads  the thread names the log carries (the reference must name
#            worker 1 "mx-named")
#   ktids    distinct kernel tids, one per thread, the main thread's = its pid
#   end      tracelog_process_end (how, code, after every user event) where a
#            controller traced the program; none elsewhere
#   sys      the filter in force from posix_trace_start to the first user
#            event is [mx.noise] (START's event_filter, as a posix_trace_filter
#            before that event changed it: ptlog record's filter by name takes
#            effect when the program opens the name, after the start); no OVERFLOW,
#            RESUME, ERROR, automatic STOP, unnamed event or id without name
#   ident    the log's process (format-spec 5.2): the program that recorded
#            the events (with an inherited stream: the parent that owns it);
#            n/a for the online paths, whose writer is the test's
#   verify   `ptlog verify` says the log is clean (n/a through a pipe)
# Cells: ok; DIFF (fails); gap (an entry of GAPS below, confirmed to
# differ); FIXED (an entry of GAPS that agrees now: fails until the entry is
# removed). A new feature gets its row or column here in the commit that adds it.
. "$(dirname "$0")/ptlog/lib.sh"
# MATRIX_KEEP=DIR keeps the logs, readings and normalised files there (for a look at a DIFF).
[ -n "${MATRIX_KEEP:-}" ] && trap 'rm -rf "$MATRIX_KEEP"; cp -r "$T" "$MATRIX_KEEP"; rm -rf "$T"' EXIT
BUILD=${TL_BUILD_DIR:?set TL_BUILD_DIR}
PROG=$BUILD/tests/matrix_prog
NORM=$BUILD/tests/matrix_norm
# Several timed writes of the flusher within the workload (in-process, ptlog, the parents).
export TRACELOG_FLUSH_INTERVAL_MS=2

# Cells expected to differ today: "ROWS ASPECTS why", ROWS a comma-separated
# list of globs over the rows, ASPECTS a comma-separated list of columns.
# Each of these cells is checked to differ; remove the entry with the fix.
# A reason that starts with "(timing)" is a gap only when the path is slow
# enough: such a cell may agree (ok) or differ (gap), and neither fails.
GAPS=(
    "online,ctl-online-*,analyze-* threads the POSIX reading interface gives no thread name (posix_trace_event_info has none), as it gives no kernel tid"
    "online,ctl-online-*,analyze-* ktids the POSIX reading interface gives no kernel tid (posix_trace_event_info has none)"
)

ASPECTS=(run names ids fields threads ktids end sys ident verify)
ROWS=()
declare -A END IDENT NOVERIFY RUNFAIL

# wait_for DESC CMD...: until CMD succeeds, 60 s at most (no timing is asserted: a bound against a hang).
wait_for() {
    local desc=$1 i
    shift
    for ((i = 0; i < 6000; i++)); do
        "$@" && return 0
        sleep 0.01
    done
    echo "gave up waiting for $desc"
    return 1
}

# step ROW WANT DESC CMD...: runs CMD; an exit status other than WANT goes to the row's run cell.
step() {
    local r=$1 want=$2 desc=$3
    shift 3
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    [ "$rc" = "$want" ] || RUNFAIL[$r]+="$desc: exit $rc, want $want: $(head -c 300 "$T/err"); "
}

# row NAME END IDENT: a path whose reading is NAME.jsonl, from NAME.ptl.
row() {
    ROWS+=("$1")
    END[$1]=$2
    IDENT[$1]=$3
    [ -e "$1.ptl" ] && step "$1" 0 "ptlog convert --to jsonl" "$PTLOG" convert "$1.ptl" --to jsonl -o "$1.jsonl"
}
EXITED='{"how":"EXITED","code":0}'
KILLED='{"how":"SIGNALED","code":9}'
end_of() { if [ "$1" = exit ]; then echo "$EXITED"; else echo "$KILLED"; fi; }
OWN="program=matrix_prog pid=the user events'"
PARENT="program=matrix_prog pid=another process's"

# ---- the paths ----------------------------------------------------------
for mode in own-flush own-loop own-untilfull own-sloop; do
    step "$mode" 0 "$mode" "$PROG" "$mode" "$mode.ptl"
    row "$mode" none "$OWN"
done

step online 0 online "$PROG" online online.ptl
row online none n/a

for ending in exit kill; do
    step "ctl-online-$ending" 0 "ctl-online" "$PROG" ctl-online "ctl-online-$ending.ptl" "$ending"
    row "ctl-online-$ending" "$(end_of $ending)" n/a
done

for ending in exit kill; do
    step "record-$ending" "$([ $ending = exit ] && echo 0 || echo $((128 + 9)))" "ptlog record" \
        "$PTLOG" record -q --exclude mx.noise -o "record-$ending.ptl" -- "$PROG" bare "$ending"
    row "record-$ending" "$(end_of $ending)" "$OWN"
done

# attach: the program opens its names, says ready and waits for SIGUSR1; ptlog attaches; once its log
# exists (tracing has begun) the program is let go. Its parent is a sleep that never reaps it, so how it
# ended is still there for ptlog to read (a shell reaps its children at any time).
ready() { grep -qx ready "$1" 2>/dev/null && [ -s "$1.pid" ]; }
for ending in exit kill; do
    r=attach-$ending
    sh -c '"$0" bare-wait "$1" >"$2" & echo $! >"$2.pid"; exec sleep 300' "$PROG" "$ending" "$r.out" &
    hold=$!
    if why=$(wait_for "the program to be ready" ready "$r.out"); then
        pid=$(cat "$r.out.pid")
        "$PTLOG" attach -q --exclude mx.noise "$pid" -o "$r.ptl" 2>"$r.err" &
        apid=$!
        if why=$(wait_for "ptlog attach to begin" test -e "$r.ptl"); then
            kill -USR1 "$pid"
        else
            RUNFAIL[$r]+="$why; "
            kill -KILL "$pid"
        fi
        wait "$apid"
        rc=$?
        [ "$rc" = 0 ] || RUNFAIL[$r]+="ptlog attach: exit $rc: $(head -c 300 "$r.err"); "
    else
        RUNFAIL[$r]+="$why; "
    fi
    kill "$hold" 2>/dev/null
    wait "$hold" 2>/dev/null
    row "$r" "$(end_of $ending)" "$OWN"
done

for how in fork spawn; do
    for ending in exit kill; do
        step "$how-$ending" 0 "$how" "$PROG" "$how" "$how-$ending.ptl" "$ending"
        row "$how-$ending" none "$PARENT"
    done
done

# A log written into a pipe, read from it as a stream.
"$PROG" own-flush - 2>pipe.err | "$PTLOG" convert - --to jsonl -o pipe.jsonl 2>>pipe.err
rcs="${PIPESTATUS[*]}"
[ "$rcs" = "0 0" ] || RUNFAIL[pipe]+="exit statuses $rcs, want 0 0: $(head -c 300 pipe.err); "
row pipe none "$OWN"
NOVERIFY[pipe]=1

# Live reading (issue 28), the two ways: the program's log followed while it is written (ptlog convert
# --follow, started first on an empty file: it waits for the header, then reads each chunk as it lands;
# it ends at the trailer), and ptlog record writing into a pipe that ptlog reads as it comes. The
# followed logs are the program's own (their verify is own-flush's and own-loop's): these rows are the
# follower's readings.
# A LOOP log is followed by reading its ring again as it changes (follow-loop).
for mode in flush loop; do
    r=follow$([ $mode = loop ] && echo -loop)
    : >"$r-src.ptl"
    "$PTLOG" convert --follow "$r-src.ptl" --to jsonl -o "$r.jsonl" 2>"$r.err" &
    fpid=$!
    step "$r" 0 "own-$mode, followed" "$PROG" "own-$mode" "$r-src.ptl"
    wait "$fpid"
    rc=$?
    [ "$rc" = 0 ] || RUNFAIL[$r]+="ptlog convert --follow: exit $rc: $(head -c 300 "$r.err"); "
    row "$r" none "$OWN"
    NOVERIFY[$r]=1
done

"$PTLOG" record -q --exclude mx.noise -o - -- "$PROG" bare exit 2>record-pipe.err |
    "$PTLOG" convert - --to jsonl -o record-pipe.jsonl 2>>record-pipe.err
rcs="${PIPESTATUS[*]}"
[ "$rcs" = "0 0" ] || RUNFAIL[record-pipe]+="exit statuses $rcs, want 0 0: $(head -c 300 record-pipe.err); "
row record-pipe "$EXITED" "$OWN"
NOVERIFY[record-pipe]=1

# The reference's log read on ptlog's thread alone and with 3 threads loading its chunks ahead
# (PTLOG_READ_AHEAD; every other row is read with ptlog's default, a thread per spare CPU).
for n in 0 3; do
    cp own-flush.ptl "ahead-$n.ptl"
    PTLOG_READ_AHEAD=$n row "ahead-$n" none "$OWN"
done

# The reference's log formatted on ptlog's thread alone and read in ranges on 4 threads
# (PTLOG_FORMAT_THREADS=3, tools/ptlog/parts.c: its 29 chunks are a unit each).
for n in 0 3; do
    cp own-flush.ptl "format-$n.ptl"
    PTLOG_FORMAT_THREADS=$n row "format-$n" none "$OWN"
done

# The reference's log read by an analyzer through the standard interface (posix_trace_open, then
# posix_trace_getnext_event under the handle's read lock), on its thread alone and with 2 threads
# loading ahead (TRACELOG_READ_AHEAD at the open), written out as the online rows are.
for n in 0 2; do
    TRACELOG_READ_AHEAD=$n step "analyze-$n" 0 "analyze" "$PROG" analyze own-flush.ptl "analyze-$n.ptl"
    row "analyze-$n" none n/a
done

# Round trips: ptl -> jsonl -> ptl, ptl -> json -> ptl, and ptl -> jsonl -> ptl of a recorded log.
# The imports read ptlog's own lines on their fast path (json_in.c's own_object).
step conv-jsonl 0 "jsonl -> ptl" "$PTLOG" convert own-flush.jsonl --to ptl -o conv-jsonl.ptl
row conv-jsonl none "$OWN"
step conv-json 0 "ptl -> json" "$PTLOG" convert own-flush.ptl --to json -o own-flush.json
step conv-json 0 "json -> ptl" "$PTLOG" convert own-flush.json --to ptl -o conv-json.ptl
row conv-json none "$OWN"
step conv-record 0 "jsonl -> ptl" "$PTLOG" convert record-kill.jsonl --to ptl -o conv-record.ptl
row conv-record "$KILLED" "$OWN"
# The same imports from a pipe: lines and events read in place as the input arrives, across the
# buffer's refills.
for f in jsonl json; do
    step "conv-$f-pipe" 0 "$f -> ptl through a pipe" bash -c \
        "cat own-flush.$f | '$PTLOG' convert - --to ptl -o conv-$f-pipe.ptl"
    row "conv-$f-pipe" none "$OWN"
done

# ---- the comparison -------------------------------------------------------
REF=own-flush
for r in "${ROWS[@]}"; do
    if [ -s "$r.jsonl" ]; then
        "$NORM" "$r.jsonl" "$r" 2>"$r.norm.err" && ok || bad "$r: matrix_norm: $(cat "$r.norm.err")"
    else
        RUNFAIL[$r]+="no reading; "
    fi
done
grep -q '^R01 ' "$REF.names" 2>/dev/null && grep -q '^R02 ' "$REF.names" ||
    bad "the reference lacks the workers' events: $(cat "$REF.summary" 2>/dev/null)"

gap_of() { # ROW ASPECT: prints the reason of the GAPS entry for the cell, if any
    local g globs aspects glob list
    for g in "${GAPS[@]}"; do
        read -r globs aspects _ <<<"$g"
        [[ ,$aspects, == *,$2,* ]] || continue
        IFS=, read -ra list <<<"$globs"
        for glob in "${list[@]}"; do
            # shellcheck disable=SC2053
            [[ $1 == $glob ]] && { echo "${g#* * }"; return 0; }
        done
    done
    return 1
}

# agrees ROW ASPECT: 0 agrees, 1 differs (why in $WHY), 2 not applicable.
agrees() {
    local r=$1 a=$2 want
    WHY=
    case $a in
    run)
        [ -z "${RUNFAIL[$r]:-}" ] && return 0
        WHY=${RUNFAIL[$r]}
        return 1
        ;;
    names | ids | fields | ktids | sys)
        cmp -s "$REF.$a" "$r.$a" && return 0
        WHY=$(diff "$REF.$a" "$r.$a" 2>&1 | head -8)
        return 1
        ;;
    threads)
        cmp -s "$REF.$a" "$r.$a" && grep -qx "R01 mx-named" "$r.$a" && return 0
        WHY="reference: $(tr '\n' ';' <"$REF.$a"); $r: $(tr '\n' ';' <"$r.$a" 2>&1); wanted R01 mx-named"
        return 1
        ;;
    end | ident)
        if [ "$a" = end ]; then want=${END[$r]}; else want=${IDENT[$r]}; fi
        [ "$want" = n/a ] && return 2
        [ "$(cat "$r.$a" 2>&1)" = "$want" ] && return 0
        WHY="$(cat "$r.$a" 2>&1), want $want"
        return 1
        ;;
    verify)
        [ -n "${NOVERIFY[$r]:-}" ] && return 2
        "$PTLOG" verify -q "$r.ptl" >"$r.verify" 2>&1 && return 0
        WHY=$(head -3 "$r.verify")
        return 1
        ;;
    esac
}

line=$(printf '%-16s' path)
for a in "${ASPECTS[@]}"; do line+=$(printf ' %-7s' "$a"); done
MATRIX=("$line")
for r in "${ROWS[@]}"; do
    line=$(printf '%-16s' "$r$([ "$r" = $REF ] && echo ' (ref)')")
    for a in "${ASPECTS[@]}"; do
        agrees "$r" "$a"
        res=$?
        reason=$(gap_of "$r" "$a")
        if [ $res = 2 ]; then
            cell=n/a
            [ -n "$reason" ] && bad "$r / $a: listed as a gap ($reason) but not applicable"
        elif [ -n "$reason" ]; then
            if [ $res = 0 ] && [[ $reason == "(timing)"* ]]; then
                cell=ok # a gap that shows only when the path is slow enough
                ok
            elif [ $res = 0 ]; then
                cell=FIXED
                bad "$r / $a: listed as a gap ($reason) but agrees now: remove it from GAPS"
            else
                cell=gap
                ok
            fi
        elif [ $res = 0 ]; then
            cell=ok
            ok
        else
            cell=DIFF
            bad "$r / $a differs from $REF:
$WHY"
        fi
        line+=$(printf ' %-7s' "$cell")
    done
    MATRIX+=("$line")
done

echo "composition matrix (reference $REF: $(cat "$REF.summary" 2>/dev/null)):"
printf '  %s\n' "${MATRIX[@]}"
echo "expected gaps (each cell checked to differ):"
printf '  %s\n' "${GAPS[@]}"
finish
