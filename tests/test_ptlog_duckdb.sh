#!/bin/bash
# DuckDB reads `ptlog convert --to jsonl` output without glue: read_json_auto
# on the JSON Lines, a GROUP BY on a typed field (README.md, "Querying with
# DuckDB"). DuckDB comes from npm, installed once into a cache under the
# build tree; without node/npm or the registry the test is skipped (77).
#
# The package is DuckDB's own Node API, @duckdb/node-api, whose binary is an
# npm package (@duckdb/node-bindings-linux-x64): the older `duckdb` package
# downloads its binary from outside the registry and otherwise compiles
# DuckDB from source (more than 5 minutes on 2 cores).
. "$(dirname "$0")/ptlog/lib.sh"

skip() { echo "SKIP: $*"; exit 77; }
command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm are needed to load DuckDB"
CACHE=${TL_BUILD_DIR:?}/npm-duckdb
if [ ! -d "$CACHE/node_modules/@duckdb/node-api" ]; then
    mkdir -p "$CACHE" || skip "cannot create $CACHE"
    timeout 300 npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error @duckdb/node-api >"$T/npm.log" 2>&1 ||
        skip "npm install @duckdb/node-api failed (offline?): $(tail -n 2 "$T/npm.log")"
fi

"$TL_BUILD_DIR/tests/make_typed" typed.ptl || { echo "FAIL: make_typed"; exit 1; }
expect_rc 0 "to jsonl" "$PTLOG" convert --to jsonl typed.ptl -o typed.jsonl

# The query of README.md: events per port and their bytes, complete payloads only.
cat >query.mjs <<'JS'
import { createRequire } from 'node:module';
const require = createRequire(process.argv[2] + '/');
const { DuckDBInstance } = require('@duckdb/node-api');
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const r = await c.runAndReadAll(`
  SELECT fields.port AS port, count(*) AS events, sum(fields.len) AS bytes
  FROM read_json_auto('typed.jsonl')
  WHERE name = 'net.rx' AND fields_size IS NULL
  GROUP BY port ORDER BY port`);
console.log(JSON.stringify(r.getRowObjectsJson()));
JS
expect_rc 0 "duckdb query" node query.mjs "$CACHE/node_modules"
printf '%s\n' '[{"port":"80","events":"3","bytes":"6000"},{"port":"443","events":"3","bytes":"4500"}]' >want.txt
expect_same "GROUP BY a field" want.txt "$T/out"

finish
