// node duckdb_run.mjs NODE_MODULES SQL: runs SQL with DuckDB's Node API
// (@duckdb/node-api, installed by tests/test_ptlog_duckdb.sh) in the current
// directory and prints the rows of its last statement as one JSON line; a
// failing statement prints DuckDB's error on stderr and exits 1. It stands
// in for the `duckdb -c SQL` of README.md's commands.
import { createRequire } from 'node:module';
const require = createRequire(process.argv[2] + '/');
const { DuckDBInstance } = require('@duckdb/node-api');
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
try {
  const r = await c.runAndReadAll(process.argv[3]);
  console.log(JSON.stringify(r.getRowObjectsJson()));
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
