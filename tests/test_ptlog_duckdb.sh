#!/bin/bash
# README.md's "Querying with DuckDB and jq" commands, extracted from README.md
# and run as written (so the two cannot drift): `ptlog` is the built tool and
# `duckdb -c SQL` runs SQL through DuckDB's Node API (tests/ptlog/duckdb_run.mjs),
# in a directory whose app.ptl is, in turn, a typed log of the writer API, the
# typed sample of the README, and a log of a million events whose typed event
# types first appear after 990,000 untyped ones (past what DuckDB samples to
# infer columns). Exact rows are checked against counts made while writing.
#
# DuckDB comes from npm, a pinned version installed once per user into a
# cache (~/.cache/tracelog-tests, shared by every build tree, under a lock);
# without node/npm or the registry the test is skipped (77). The package is
# DuckDB's own Node API, @duckdb/node-api, whose binary is an npm package
# (@duckdb/node-bindings-linux-x64): the older `duckdb` package downloads its
# binary from outside the registry and otherwise compiles DuckDB from source.
. "$(dirname "$0")/ptlog/lib.sh"

skip() { echo "SKIP: $*"; exit 77; }
command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm are needed to load DuckDB"
PACKAGE=@duckdb/node-api@1.5.6-r.1
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tracelog-tests/duckdb-node-api-1.5.6-r.1
mkdir -p "$CACHE" || skip "cannot create $CACHE"
(
    flock 9 # two build trees testing at once install once
    [ -d "$CACHE/node_modules/@duckdb/node-api" ] ||
        timeout 300 npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "$PACKAGE" >"$T/npm.log" 2>&1
) 9>"$CACHE.lock" || skip "npm install $PACKAGE failed (offline?): $(tail -n 2 "$T/npm.log")"

# The first sh block after the heading, and its duckdb commands.
sed -n '/^### Querying with DuckDB and jq$/,$p' "$SRC/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >readme.sh
[ "$(grep -c '^duckdb -c "' readme.sh)" = 2 ] && [ "$(grep -c '^ptlog convert app.ptl --to jsonl -o app.jsonl$' readme.sh)" = 1 ] &&
    ok || { bad "README's DuckDB block is not the one this test knows: $(cat readme.sh)"; finish; }
ptlog() { "$PTLOG" "$@"; }
duckdb() {
    [ "$1" = -c ] && [ $# = 2 ] || { echo "duckdb stand-in: only -c SQL" >&2; return 2; }
    node "$GOLD/duckdb_run.mjs" "$CACHE/node_modules" "$2"
}
# readme DIR: runs README's block in DIR (holding app.ptl); the rows of the query in DIR/rows, the
# Parquet COPY's count of rows in DIR/copied.
readme() {
    (cd "$1" && . "$T/readme.sh") >"$1/out" 2>"$1/err"
    RC=$?
    [ "$RC" = 0 ] && ok || bad "$1: README's commands failed (exit $RC): $(head -c 600 "$1/err")"
    sed -n 1p "$1/out" >"$1/rows"
    sed -n 2p "$1/out" >"$1/copied"
}
# count DIR SQL: a query of this test's own on DIR's outputs.
count() { (cd "$1" && duckdb -c "$2"); }

# A typed log of the writer API: two complete net.rx per port, one short and one long payload.
mkdir typed
"$TL_BUILD_DIR/tests/make_typed" typed/app.ptl || bad "make_typed"
readme typed
printf '%s\n' '[{"port":80,"events":"3","bytes":"6000"},{"port":443,"events":"3","bytes":"4500"}]' >want
expect_same "typed: events and bytes per port" want typed/rows
[ "$(cat typed/copied)" = '[{"Count":"'"$("$PTLOG" convert typed/app.ptl --to jsonl | grep -c '"ts":')"'"}]' ] &&
    ok || bad "typed: app.parquet does not hold every event: $(cat typed/copied)"

# The README's typed sample.
mkdir sample
"$TL_BUILD_DIR/samples/typed" sample/app.ptl || bad "samples/typed"
readme sample
printf '%s\n' '[{"port":443,"events":"6","bytes":"4584"},{"port":8080,"events":"6","bytes":"4584"}]' >want
expect_same "samples/typed: events and bytes per port" want sample/rows

# A million events: 990,000 untyped ticks, then net.rx (u32 len; u16 port) and
# a third type with other fields (u8 level; char[] text) alternating. Under
# the sanitizers (ptlog 10 times slower) a tenth: the types still come after
# 99,000 lines, far past the 20,480 DuckDB samples.
N=1000000
nm "$PTLOG" 2>/dev/null | grep -q __asan_init && N=100000
mkdir big
awk -v N=$N 'BEGIN {
    print "{\"format\":{\"schema\":\"tracelog\",\"version\":1},\"attributes\":{\"trace_name\":\"big\"},\"event_types\":[{\"id\":1,\"name\":\"tick\"},{\"id\":40,\"name\":\"net.rx\",\"schema\":\"u32 len; u16 port\"},{\"id\":41,\"name\":\"late\",\"schema\":\"u8 level; char[] text\"}]}"
    for (i = 0; i < N; i++) {
        ts = sprintf("1714564800%09d", i * 1000)
        if (i < N - N / 100) {
            printf "{\"id\":1,\"ts\":%s,\"pid\":1,\"tid\":2,\"data\":\"%08x\"}\n", ts, i
        } else if (i % 2) {
            len = 100 + i % 1000; port = i % 4 == 1 ? 443 : 80
            n[port]++; b[port] += len
            printf "{\"id\":40,\"ts\":%s,\"pid\":1,\"tid\":2,\"data\":\"%02x%02x%02x%02x%02x%02x0000\"}\n", ts,
                len % 256, int(len / 256), 0, 0, port % 256, int(port / 256)
        } else {
            printf "{\"id\":41,\"ts\":%s,\"pid\":1,\"tid\":3,\"ktid\":77,\"data\":\"0268656c6c6f\"}\n", ts
        }
    }
    printf "[{\"port\":80,\"events\":\"%d\",\"bytes\":\"%d\"},{\"port\":443,\"events\":\"%d\",\"bytes\":\"%d\"}]\n", n[80], b[80], n[443], b[443] > "want"
}' >big.jsonl
expect_rc 0 "big: to ptl" "$PTLOG" convert big.jsonl --to ptl -o big/app.ptl
readme big
expect_same "big: net.rx per port, after $((N - N / 100)) untyped events" want big/rows
parquet=$(count big "SELECT count(*) AS n, count(ktid) AS k, min(fields->>'text') AS t, max(ts) - min(ts) AS span FROM 'app.parquet'")
[ "$parquet" = '[{"n":"'$N'","k":"'$((N / 200))'","t":"hello","span":"'$(((N - 1) * 1000))'"}]' ] && ok || bad "big: app.parquet: $parquet"

finish
