// Queries a cmpbench archive's Parquet tables with DuckDB (@duckdb/node-api):
//
//   npm ci && node query.mjs results/<run-id>
//
// prints the summary per system, phase and op; every interval of every phase, its
// throughput and p99 beside the server's stats sampled at that time of day (an ASOF
// join on time: the last sample at or before the interval's end); and the client's
// CPU and memory per phase. In archives written before the timestamp columns, t is
// made from t_unix_ns, and t_start from the manifest: each phase's start plus the
// interval's start_ns.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const arg = process.argv[2];
if (!arg || !existsSync(join(arg, 'manifest.json'))) {
  console.error('usage: node query.mjs ARCHIVE_DIR   (a cmpbench archive: the directory that holds manifest.json)');
  process.exit(2);
}
const dir = resolve(arg);
const file = (name) => `'${join(dir, name).replaceAll("'", "''")}'`;

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();

await c.run(`SET TimeZone = 'UTC'`);

// The columns a table has: archives of format version 1 written before the
// timestamp columns (server and client stats' t, intervals' t_start) lack them.
async function columns(table) {
  const r = await c.runAndReadAll(`SELECT name FROM parquet_schema(${file(table + '.parquet')})`);
  return r.getRowsJson().map(([name]) => name);
}

for (const table of ['summary', 'intervals', 'server_stats', 'client_stats']) {
  let extra = '';
  if (table.endsWith('_stats') && !(await columns(table)).includes('t')) {
    extra = `, make_timestamp(t_unix_ns // 1000) AT TIME ZONE 'UTC' AS t`;
  }
  await c.run(`CREATE VIEW ${table}_raw AS SELECT *${extra} FROM read_parquet(${file(table + '.parquet')})`);
}
// The phases of the manifest, for their wall-clock starts.
await c.run(`CREATE VIEW phases AS
  SELECT p.system, p."index" AS phase_index, p.repetition, p.started::TIMESTAMPTZ AS started
  FROM (SELECT unnest(phases) AS p FROM read_json(${file('manifest.json')}))`);

// Each interval's start and end as times of day: t_start, or from the manifest in an
// archive written before t_start was.
const start = (await columns('intervals')).includes('t_start') ? 'i.t_start' : 'p.started + to_microseconds(i.start_ns // 1000)';
await c.run(`CREATE VIEW intervals AS
  SELECT i.*, ${start} AS t0, ${start} + to_microseconds((i.end_ns - i.start_ns) // 1000) AS t1
  FROM intervals_raw i
  LEFT JOIN phases p ON p.system = i.system AND p.phase_index = i.phase_index AND p.repetition = i.repetition`);

async function show(title, sql) {
  const r = await c.runAndReadAll(sql);
  const head = r.columnNames();
  const rows = r.getRowsJson().map((row) => row.map((v) => (v === null ? '-' : String(v))));
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((v, i) => v.padEnd(width[i])).join('  ').trimEnd();
  console.log(`${title} (${rows.length} rows)`);
  console.log(line(head));
  for (const row of rows) console.log(line(row));
  console.log();
}

await show('Summary per system, phase and op', `
  SELECT system, phase, repetition AS rep, op, count, round(throughput) AS ops_per_s,
         round(resp_p50_ns / 1e6, 3) AS p50_ms, round(resp_p99_ns / 1e6, 3) AS p99_ms,
         round(resp_p999_ns / 1e6, 3) AS p999_ms, errors, status
  FROM summary_raw
  ORDER BY system, phase_index, repetition, op`);

// Intervals (all ops together, the slowest op's p99) beside the server's stats at
// that time: the commands it processed per second since its sample before, its
// clients and memory (Redis INFO field names; other servers have other keys).
await show('Intervals over time, with the server stats sampled by then', `
  WITH iv AS (
    SELECT system, phase_index, phase, repetition, interval, min(t0) AS t0, max(t1) AS t1,
           sum(count) AS ok, sum(errors) AS errors, max(resp_p99_ns) AS p99_ns, max(end_ns - start_ns) AS len_ns
    FROM intervals GROUP BY ALL),
  samples AS (
    SELECT system, t,
           max(value_float) FILTER (WHERE key = 'total_commands_processed') AS cmds,
           max(value_float) FILTER (WHERE key = 'connected_clients') AS clients,
           max(value_float) FILTER (WHERE key = 'used_memory') AS used_memory
    FROM server_stats_raw GROUP BY system, t),
  srv AS (
    SELECT *, round((cmds - lag(cmds) OVER w) / ((epoch_us(t) - lag(epoch_us(t)) OVER w) / 1e6)) AS server_cmds_per_s
    FROM samples WINDOW w AS (PARTITION BY system ORDER BY t))
  SELECT iv.system, iv.phase, iv.interval, strftime(iv.t0 AT TIME ZONE 'UTC', '%H:%M:%S.%g') AS start_utc,
         round(iv.len_ns / 1e6) AS ms, round(iv.ok / (iv.len_ns / 1e9)) AS ops_per_s, round(iv.p99_ns / 1e6, 3) AS p99_ms, iv.errors,
         strftime(srv.t AT TIME ZONE 'UTC', '%H:%M:%S.%g') AS sampled_utc, srv.server_cmds_per_s, srv.clients,
         round(srv.used_memory / 1e6, 1) AS used_mb
  FROM iv ASOF LEFT JOIN srv ON iv.system = srv.system AND iv.t1 >= srv.t
  ORDER BY iv.t0, iv.system`);

await show('Client CPU and memory per phase', `
  SELECT system, phase, process, count(*) AS samples, round(avg(cpu_percent), 1) AS avg_cpu_pct,
         round(max(rss_bytes) / 1e6, 1) AS max_rss_mb, min(t) AS first_sample
  FROM client_stats_raw
  GROUP BY ALL ORDER BY system, min(phase_index), process`);
