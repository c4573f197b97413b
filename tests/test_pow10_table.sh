#!/usr/bin/env bash
# libtracelog/format/pow10_table.h is what libtracelog/format/pow10_gen.py
# writes (the powers of ten of the shortest double text, computed exactly
# with Python's integers). Skipped (77) without python3.
root=${TL_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
if python3 "$root/libtracelog/format/pow10_gen.py" --check "$root/libtracelog/format/pow10_table.h"; then
    echo "pow10_table.h: 617 entries, as pow10_gen.py writes them"
    exit 0
fi
exit 1
