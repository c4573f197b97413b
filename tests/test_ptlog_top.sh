#!/bin/bash
# ptlog top (issue 28) in a real terminal: tmux runs it in a pane (send-keys
# drives it, capture-pane reads the screen).
# - top FILE of a log being written (samples/record): the event types and
#   the threads with their kernel tids appear; the sort key changes with a
#   key; q quits with exit 0 and the terminal back in canonical mode with echo;
# - Ctrl-C quits the same way;
# - top PID: the running program attached to, its events shown; q stops the
#   attach child too (no ptlog left running);
# - a writer gone: "[log ended]" on screen; after q its WRITER_GONE warning
#   (held back while the alternate screen is shown) and exit 1;
# - without a terminal: one summary line per interval, ending with the log.
# Every wait is bounded (20 s) and only the screen's content is asserted.
# Skipped (77) without tmux.
. "$(dirname "$0")/ptlog/lib.sh"
SAMPLES=${TL_BUILD_DIR:?set TL_BUILD_DIR}/samples
command -v tmux >/dev/null || { echo "tmux not installed: skipped"; exit 77; }

# A tmux server of our own (its socket in $T), killed at the end whatever happens.
TMUX_SOCK=$T/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$T"' EXIT
SESSION=""
screen() { tm capture-pane -p -t "$SESSION"; }
keys() { tm send-keys -t "$SESSION" "$@"; }
# shows REGEX DESC: waits (bounded) until the screen matches REGEX (grep -E).
shows() {
    local i
    for ((i = 0; i < 400; i++)); do
        screen | grep -Eq -- "$1" && { ok; return 0; }
        sleep 0.05
    done
    bad "$2: the screen never showed /$1/:
$(screen)"
    return 1
}
# In a new session (the old ones are left: killing the last would end the server while the
# next session starts), top, then its exit status and the terminal's modes once it has ended.
start_top() {
    SESSION=top$((${SESSION#top} + 1))
    tm new-session -d -s "$SESSION" -x 120 -y 40 "bash --norc --noprofile"
    keys "'$PTLOG' top $*; echo EXIT=\$?; stty -a | tr ' ;' '\n\n' | grep -Ex -- '-?(icanon|echo)' | tr '\n' ' '; echo MODES" Enter
}
restored() {
    shows "EXIT=0" "$1: exit status"
    shows "^icanon echo MODES" "$1: the terminal's modes after top"
}

"$SAMPLES/record" live.ptl 100000000 >/dev/null &
writer=$!
for ((i = 0; i < 400; i++)); do [ -s live.ptl ] && break; sleep 0.05; done

start_top live.ptl
shows "^request:begin +[0-9]+ +[0-9]+ +[0-9]+" "top FILE: the event types"
shows "^ptlog top - live.ptl" "top FILE: the title"
shows "^TID +PID +THREAD" "top FILE: the threads"
shows "^$writer +$writer +" "top FILE: the main thread by its kernel tid"
shows "sort: rate" "top FILE: the default sort"
keys n
shows "sort: name" "top FILE: key n"
# By name: note, posix_trace_start, request:begin, request:end, in this order.
order=$(screen | awk '/^EVENT TYPE/ { on = 1; next } on && NF == 0 { exit } on { printf "%s ", $1 }')
case $order in "note posix_trace_start request:begin request:end "*) ok ;; *) bad "sorted by name: $order" ;; esac
keys q
restored "top FILE, q"

start_top live.ptl
shows "^request:begin" "top FILE again"
keys C-c
restored "top FILE, Ctrl-C"

start_top "$writer"
shows "^ptlog top - process $writer" "top PID: the title"
shows "^request:begin +[0-9]+ +[0-9]+ +[0-9]+" "top PID: the event types"
keys q
restored "top PID, q"
attach_left=$(pgrep -f "ptlog attach -q $writer" | wc -l)
[ "$attach_left" = 0 ] && ok || bad "top PID left its attach child running"

kill "$writer"
wait "$writer" 2>/dev/null

# The writer is gone (killed: its log not closed): the last figures stay, marked; after q, the
# warning that the alternate screen would have hidden, and exit 1.
start_top live.ptl
shows "^ptlog top - live.ptl  \[log ended\]" "top FILE, writer gone: the end on screen"
keys q
shows "WRITER_GONE" "top FILE, writer gone: the warning after the screen"
shows "EXIT=1" "top FILE, writer gone: exit status"

# Without a terminal: a line per interval, ending with the log (closed: after the trailer).
"$SAMPLES/record" done.ptl 300 >/dev/null
expect_rc 0 "top without a terminal" "$PTLOG" top --interval 0.2 done.ptl
grep -Eq "^[0-9.]+s events [0-9]+ rate [0-9]+/s bytes [0-9]+ lost stream [0-9]+ log [0-9]+ .* \(ended\)$" "$T/out" &&
    ok || bad "top without a terminal: $(tail -2 "$T/out")"
expect_rc 2 "top --sort bad" "$PTLOG" top --sort size done.ptl
expect_err "--sort: expected rate, total, bytes or name" "top --sort bad: message"
expect_rc 2 "top without a target" "$PTLOG" top
expect_rc 3 "top of a process that does not exist" "$PTLOG" top 2147483646
finish
