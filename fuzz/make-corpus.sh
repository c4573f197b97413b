#!/usr/bin/env bash
# Regenerates the seed files fuzz/corpus/<target>/seed-* with fuzz/gen_corpus.c.
#
#   fuzz/make-corpus.sh BUILD_DIR
#
# BUILD_DIR is a configured and built tree (it needs BUILD_DIR/libtracelog_internal.a:
# gen_corpus calls internal tl_ functions, which libtracelog.a keeps local),
# e.g. cmake -S . -B build && cmake --build build --target tracelog_internal.
# Files the fuzzers added (named by their SHA-1) are left alone. Logs get a
# fresh random salt each time, so a rerun changes their checksums.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: fuzz/make-corpus.sh BUILD_DIR}
lib="$build/libtracelog_internal.a"
[[ -f $lib ]] || { echo "make-corpus.sh: $lib not found: build tracelog_internal first" >&2; exit 2; }

cc=${CC:-cc}
out="$build/gen_corpus"
# shellcheck disable=SC2046 # pkg-config prints several flags
"$cc" -std=gnu11 -O1 -Wall -Wextra -I"$src/include" -I"$src/libtracelog" \
    "$src/fuzz/gen_corpus.c" "$lib" $(pkg-config --libs libzstd libcbor jansson) -lpthread -lm \
    -o "$out"
rm -f "$src"/fuzz/corpus/*/seed-*
"$out" "$src/fuzz/corpus"
du -sh "$src/fuzz/corpus"
