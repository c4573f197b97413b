#!/usr/bin/env bash
# Regenerates the seed files fuzz/corpus/<target>/seed-* with fuzz/gen_corpus.c.
#
#   fuzz/make-corpus.sh BUILD_DIR [name_map]
#
# BUILD_DIR is a configured and built tree (it needs BUILD_DIR/libtracelog_internal.a:
# gen_corpus calls internal tl_ functions, which libtracelog.a keeps local),
# e.g. cmake -S . -B build && cmake --build build --target tracelog_internal.
# Files the fuzzers added (named by their SHA-1) are left alone. Logs get a
# fresh random salt each time, so a rerun changes their checksums. With
# name_map, only fuzz/corpus/name_map/seed-* are rewritten (no log, no salt).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: fuzz/make-corpus.sh BUILD_DIR [name_map]}
only=${2:-}
[[ -z $only || $only == name_map ]] || { echo "make-corpus.sh: only name_map's seeds are made alone" >&2; exit 2; }
lib="$build/libtracelog_internal.a"
[[ -f $lib ]] || { echo "make-corpus.sh: $lib not found: build tracelog_internal first" >&2; exit 2; }

cc=${CC:-cc}
out="$build/gen_corpus"
# shellcheck disable=SC2046 # pkg-config prints several flags
"$cc" -std=gnu11 -O1 -Wall -Wextra -I"$src/include" -I"$src/libtracelog" \
    "$src/fuzz/gen_corpus.c" "$lib" $(pkg-config --libs libzstd libcbor jansson) -lpthread -lm \
    -o "$out"
rm -f "$src"/fuzz/corpus/"${only:-*}"/seed-*
"$out" "$src/fuzz/corpus" ${only:+"$only"}
du -sh "$src/fuzz/corpus"
