#!/usr/bin/env bash
# compare-duckdb.sh — a real DuckDB reads sessctl's usage export, and its sums
# equal `sessctl stats --all` exactly.
#
# Installs DuckDB's Node API (npm @duckdb/node-api, which ships the native
# engine; pinned) into a cache directory, then for each data set:
#   sessctl stats --all --json                         the totals
#   sessctl export --usage -o a.parquet / a.ndjson     two formats, machine "a"
#   sessctl export --usage -o b.parquet                a copy of the store at
#                                                      another path, roots in the
#                                                      other order, machine "b"
# and DuckDB checks, with read_parquet and read_json_auto:
#   - every token sum and the row count equal stats' totals exactly, the cost
#     to a micro-dollar (a float sum in another order), and the tokens of
#     rows without a cost equal stats' "unpriced";
#   - every key is distinct, and the two exports and the two formats share
#     every key (an idempotent load sees the same requests).
# Data sets: the shared samples, testdata/sessions (all four agents) with
# testdata/claude-2.1.330, and the generated Claude Code and Codex corpora
# that compare-ccusage.sh uses (internal/gen).
#
#   scripts/compare-duckdb.sh             all data sets
#   scripts/compare-duckdb.sh --install   only install DuckDB; print its directory
# Environment: SAMPLES (default ../shared/samples), SESSCTL_CACHE (default
# ~/.cache/sessctl), CORPUS_SIZE (default 200MB), CORPUS_FILES (150).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}
DUCKV=1.5.6-r.1
SAMPLES=${SAMPLES:-$REPO/../shared/samples}
CORPUS_SIZE=${CORPUS_SIZE:-200MB}
CORPUS_FILES=${CORPUS_FILES:-150}

die() { echo "compare-duckdb: error: $*" >&2; exit 2; }

install_duckdb() {
	local dir=$CACHE/duckdb-$DUCKV
	if [ ! -f "$dir/node_modules/@duckdb/node-api/package.json" ]; then
		command -v npm >/dev/null || die "npm is needed to install @duckdb/node-api $DUCKV"
		mkdir -p "$dir"
		echo "installing @duckdb/node-api $DUCKV into $dir" >&2
		npm install --silent --no-save --no-audit --no-fund --prefix "$dir" "@duckdb/node-api@$DUCKV" >&2 ||
			die "npm install of @duckdb/node-api@$DUCKV failed"
	fi
	echo "$dir"
}

DUCKDIR=$(install_duckdb)
if [ "${1:-}" = "--install" ]; then
	echo "$DUCKDIR"
	exit 0
fi
command -v node >/dev/null || die "node is needed to run DuckDB"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/compare-duckdb.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
(cd "$REPO" && go build -o "$WORK/sessctl" ./cmd/sessctl)

cat >"$WORK/check.cjs" <<'JS'
// node check.cjs NAME STATS_JSON A_PARQUET A_NDJSON B_PARQUET
const { createRequire } = require('module');
const duck = createRequire(process.env.DUCKDIR + '/')('@duckdb/node-api');
const fs = require('fs');
const [name, statsFile, aPq, aNd, bPq] = process.argv.slice(2);
const rec = JSON.parse(fs.readFileSync(statsFile, 'utf8')).recorded;
const want = {
  rows: BigInt(rec.requests),
  input_tokens: BigInt(rec.input_tokens), output_tokens: BigInt(rec.output_tokens),
  cache_read_tokens: BigInt(rec.cache_read_tokens), cache_creation_tokens: BigInt(rec.cache_creation_tokens),
  reasoning_tokens: BigInt(rec.reasoning_tokens || 0), cache_creation_1h_tokens: BigInt(rec.cache_creation_1h_tokens || 0),
  unpriced_tokens: Object.values(rec.unpriced || {}).reduce((a, b) => a + BigInt(b), 0n),
};
const sq = (s) => "'" + s.replace(/'/g, "''") + "'";
(async () => {
  const db = await duck.DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const one = async (sql) => (await c.runAndReadAll(sql)).getRowObjects()[0];
  let bad = 0;
  for (const [fmt, src] of [['parquet', `read_parquet(${sq(aPq)})`], ['ndjson', `read_json_auto(${sq(aNd)})`]]) {
    const got = await one(`select count(*)::HUGEINT as rows,
        sum(input_tokens)::HUGEINT as input_tokens, sum(output_tokens)::HUGEINT as output_tokens,
        sum(cache_read_tokens)::HUGEINT as cache_read_tokens, sum(cache_creation_tokens)::HUGEINT as cache_creation_tokens,
        coalesce(sum(reasoning_tokens), 0)::HUGEINT as reasoning_tokens,
        coalesce(sum(cache_creation_1h_tokens), 0)::HUGEINT as cache_creation_1h_tokens,
        coalesce(sum(input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens) filter (where cost_usd is null), 0)::HUGEINT as unpriced_tokens,
        coalesce(sum(cost_usd), 0)::DOUBLE as cost_usd,
        count(distinct key)::HUGEINT as keys
      from ${src}`);
    const diffs = [];
    for (const k of Object.keys(want)) {
      if (BigInt(got[k]) !== want[k]) diffs.push(`${k} ${got[k]} (stats ${want[k]})`);
    }
    if (BigInt(got.keys) !== BigInt(got.rows)) diffs.push(`${got.keys} distinct keys in ${got.rows} rows`);
    const dc = Math.abs(Number(got.cost_usd) - rec.cost_usd);
    if (!(dc <= 1e-6)) diffs.push(`cost_usd ${got.cost_usd} (stats ${rec.cost_usd})`);
    if (diffs.length) {
      bad++;
      console.log(`compare-duckdb: ${name}: ${fmt}: DIFFERENCE: ${diffs.join('; ')}`);
    } else {
      console.log(`compare-duckdb: ${name}: ${fmt}: DuckDB = stats --all: ${got.rows} rows, input ${got.input_tokens}, output ${got.output_tokens}, ` +
        `cache read ${got.cache_read_tokens}, cache creation ${got.cache_creation_tokens} (1h ${got.cache_creation_1h_tokens}), reasoning ${got.reasoning_tokens}, ` +
        `unpriced ${got.unpriced_tokens}, cost $${Number(got.cost_usd).toFixed(6)} (stats $${rec.cost_usd.toFixed(6)})`);
    }
  }
  // the same requests under the same keys: the other format, and an export
  // of a copy of the store elsewhere, on another machine
  for (const [what, other] of [['ndjson', `read_json_auto(${sq(aNd)})`], ['second export', `read_parquet(${sq(bPq)})`]]) {
    const d = await one(`select
        (select count(*) from (select key from read_parquet(${sq(aPq)}) except select key from ${other}))::HUGEINT as only_a,
        (select count(*) from (select key from ${other} except select key from read_parquet(${sq(aPq)})))::HUGEINT as only_b,
        (select count(*) from read_parquet(${sq(aPq)}) a join ${other} b using (key)
          where a.input_tokens <> b.input_tokens or a.output_tokens <> b.output_tokens
             or a.cache_read_tokens <> b.cache_read_tokens or a.cache_creation_tokens <> b.cache_creation_tokens
             or a.session <> b.session or a.timestamp is distinct from b.timestamp::TIMESTAMPTZ)::HUGEINT as changed`);
    if (BigInt(d.only_a) || BigInt(d.only_b) || BigInt(d.changed)) {
      bad++;
      console.log(`compare-duckdb: ${name}: keys vs ${what}: DIFFERENCE: ${d.only_a} only in the first, ${d.only_b} only in the other, ${d.changed} rows changed`);
    } else {
      console.log(`compare-duckdb: ${name}: keys: the ${what} shares every key, same rows`);
    }
  }
  const m = await one(`select string_agg(distinct machine, ',' order by machine) as m from read_parquet(${sq(bPq)})`);
  if (m.m !== 'b') { bad++; console.log(`compare-duckdb: ${name}: machine of the second export ${m.m}, want b`); }
  process.exit(bad ? 1 : 0);
})().catch((e) => { console.error(`compare-duckdb: ${name}: ${e}`); process.exit(2); });
JS

status=0
# compare NAME ROOT...: one data set
compare() {
	local name=$1
	shift
	local roots=() copies=() i=0 d
	for d in "$@"; do
		roots+=(--root "$d")
	done
	local dir=$WORK/$name
	mkdir -p "$dir/copy"
	for ((i = $# - 1; i >= 0; i--)); do
		d=${*:i+1:1}
		cp -a "$d" "$dir/copy/$i"
		copies+=(--root "$dir/copy/$i")
	done
	"$WORK/sessctl" stats --all --json --no-progress "${roots[@]}" >"$dir/stats.json"
	"$WORK/sessctl" export --usage --machine a "${roots[@]}" -o "$dir/a.parquet"
	"$WORK/sessctl" export --usage --machine a --format ndjson "${roots[@]}" -o "$dir/a.ndjson"
	"$WORK/sessctl" export --usage --machine b "${copies[@]}" -o "$dir/b.parquet"
	rm -rf "$dir/copy"
	DUCKDIR=$DUCKDIR node "$WORK/check.cjs" "$name" "$dir/stats.json" "$dir/a.parquet" "$dir/a.ndjson" "$dir/b.parquet" || status=1
}

if [ -d "$SAMPLES" ]; then
	compare samples "$SAMPLES/real-clients" "$SAMPLES/claude" "$SAMPLES/codex" "$SAMPLES/kimi"
else
	echo "compare-duckdb: $SAMPLES not found; skipping the shared samples" >&2
fi
compare testdata "$REPO/testdata/sessions" "$REPO/testdata/claude-2.1.330"

# shellcheck source=lib/corpora.sh
. "$REPO/scripts/lib/corpora.sh"
generated_corpora
compare generated "$corpus" "$codex"

if [ $status -ne 0 ]; then
	echo "compare-duckdb: FAIL: DuckDB's sums of the export differ from stats --all (see DIFFERENCE lines)" >&2
else
	echo "compare-duckdb: ok: DuckDB reads the Parquet and NDJSON exports and its sums equal stats --all"
fi
exit $status
