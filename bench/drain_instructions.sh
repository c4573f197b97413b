#!/bin/bash
# drain_instructions.sh BENCH_DRAIN [KIND] [EVENTS] [LANES] [BENCH_DRAIN ARGS]: the flusher's instructions per event,
# by part, counted by callgrind (deterministic: for changes smaller than the timings' noise).
#
#   bench/drain_instructions.sh build-bench/bench/bench_drain drain_zstd 200000 1
#
# One run of bench_drain --only KIND (default drain_zstd) with LANES lanes (1 or 2, default 1); the parts
# are callgrind's inclusive counts of the flusher's cycles by groups (the groups_* kinds: they hold the parts
# below), the consumer (tl_consumer_take_wait and _take_run), the lane runs
# encoded in place (tl_rec_append_lane: consumer and chunk builder at once, recorder/lane.h), the writer
# (tracelog_writer_append and the last flush; the chunks' ends) and, within the writer, zstd, each divided by
# the events taken. Needs valgrind.
set -euo pipefail
bin=${1:?usage: drain_instructions.sh BENCH_DRAIN [KIND] [EVENTS] [LANES]}
kind=${2:-drain_zstd}
events=${3:-200000}
lanes=${4:-1}
shift $(($# < 4 ? $# : 4))  # the rest goes to bench_drain (--run 0)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TRACELOG_CLOCK=tsc valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    "$bin" --runs 1 --events "$events" --only "$kind" --lanes "$lanes" --dir "$work" "$@" >/dev/null 2>"$work/valgrind.txt" ||
    { cat "$work/valgrind.txt" >&2; exit 1; }
callgrind_annotate --inclusive=yes "$work/cg.out" 2>/dev/null |
    awk -v n="$events" '
        function add(part, v) { gsub(",", "", v); sum[part] += v }
        / [^ ]*:tl_consumer_take_wait /       { add("consumer (take)", $1) }
        / [^ ]*:tl_consumer_take_run /        { add("consumer (take)", $1) }
        / [^ ]*:tl_rec_append_lane /          { add("in place", $1) }
        / [^ ]*:tracelog_writer_append /      { add("writer (append)", $1) }
        / [^ ]*:tracelog_writer_flush /       { add("writer (append)", $1); add("flush", $1) }
        / [^ ]*:tl_groups_cycle /             { add("by groups (cycles)", $1) }
        / [^ ]*:ZSTD_compress2 /              { add("  of which zstd", $1) }
        / [^ ]*:ZSTD_compressCCtx /           { add("  of which zstd", $1) }
        END {
            printf "%-22s %s\n", "part", "instructions per event"
            split("by groups (cycles)|consumer (take)|in place|writer (append)|  of which zstd", parts, "|")
            for (i = 1; i <= 5; i++)
                if (parts[i] in sum)
                    printf "%-22s %.1f\n", parts[i], sum[parts[i]] / n
            if ("by groups (cycles)" in sum) # the cycles hold every other part but the last flush
                total = sum["by groups (cycles)"] + sum["flush"]
            else
                total = sum["consumer (take)"] + sum["in place"] + sum["writer (append)"]
            printf "%-22s %.1f\n", "total", total / n
        }'
