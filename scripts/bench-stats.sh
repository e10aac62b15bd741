#!/usr/bin/env bash
# bench-stats.sh — sessctl stats --all against ccusage session on the same
# generated Claude Code corpus (200 MB in 150 files by default), measured side
# by side in one run: wall time and peak RSS (/usr/bin/time), each tool run
# RUNS times alternately, best run of each compared.
#
# Targets (issue 3): sessctl at least 3x faster than ccusage 20.0.24, and a
# peak RSS under 32 MB, reading every file (--no-index). Exit status 1 when a
# target is missed. Then sessctl's warm runs through its index (issue 15) are
# printed beside them, and their output held to the cold one's.
#
# Then, printed beside them with issue 15's targets (not failing the
# script): Codex stats --all against ccusage codex session on a generated
# 500 MB Codex corpus (the issue's size; target: 3x) and on the 50 MB one of
# the comparison scripts, and
# ls over a generated store of many sessions, cold (--no-index, what the
# first run costs) and warm (through the index; target: 10x, peak RSS
# 128 MB at 100,000 sessions), their outputs held to each other.
#
# Then stats --all over a generated 1 GB store of 500 sessions (a copy
# in the run's directory): cold (--no-index), warm (issue 15: >= 10x) and
# after one more line is appended before each run (>= 5x) to a session that
# shares no message with another, then to a forked one, each held to
# --no-index's output.
#
# Environment: SESSCTL_CACHE (default ~/.cache/sessctl; corpus and ccusage
# live there), BENCH_SIZE (200MB), BENCH_FILES (150), RUNS (7),
# BENCH_WARM_SIZE (1GB; 0: skip the 1 GB store; made once in the cache,
# about 25 s),
# BENCH_CODEX (1: the Codex comparison; 0: skip it), BENCH_LS_FILES
# (20000 sessions; 100000 for issue 15's figure, a 3 GB store made once in
# the cache, about 4 minutes; 0: skip ls), LS_RUNS (2).
# Wall times on a shared machine vary with its load; the CPU-time ratio is
# printed beside them for that reason.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}
SIZE=${BENCH_SIZE:-200MB}
FILES=${BENCH_FILES:-150}
RUNS=${RUNS:-7}
CCV=20.0.24
export SESSCTL_CACHE=$CACHE

die() { echo "bench-stats: error: $*" >&2; exit 2; }

if [ ! -x /usr/bin/time ]; then
	echo "bench-stats: installing GNU time (Debian package time)" >&2
	(apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }) ||
		die "GNU time is needed at /usr/bin/time"
fi
CCUSAGE=$("$REPO/scripts/compare-ccusage.sh" --install)

corpus=$CACHE/corpus-claude-$SIZE-$FILES
if [ ! -d "$corpus/projects" ]; then
	rm -rf "$corpus"
	(cd "$REPO" && go run ./internal/gen claude -out "$corpus" -size "$SIZE" -files "$FILES") >&2
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-stats.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
# the binary `make build` makes (stripped, without urfave/cli's docs)
make -s -C "$REPO" build BIN="$WORK/sessctl" >/dev/null

# warm the page cache so that both tools read from memory
find "$corpus" -name '*.jsonl' -print0 | xargs -0 cat >/dev/null

# the environment both tools run in, set here once rather than by env(1)
# for each run (whose start-up would be timed with them)
unset CODEX_HOME KIMI_SHARE_DIR KIMI_DATA_DIR
export HOME="$WORK/home" CLAUDE_CONFIG_DIR="$corpus" NO_COLOR=1 TZ=UTC
# sessctl's index (docs/index.md) lives in this run's directory: the runs
# beside ccusage read every file (--no-index), the warm runs after them
# read through an index the first of them builds
export XDG_CACHE_HOME="$WORK/cache"
unset SESSCTL_NO_INDEX
measure() { # label cmd... ; prints "seconds kilobytes cpu-seconds"
	local label=$1 start end
	shift
	# wall time from bash's microsecond clock (GNU time's %e has 10 ms
	# steps, a tenth of sessctl's run); it includes starting time(1),
	# about a millisecond, for both tools
	start=$EPOCHREALTIME
	/usr/bin/time -f "%M %U %S" -o "$WORK/time" "$@" >"$WORK/$label.out" 2>"$WORK/$label.err" ||
		{ cat "$WORK/$label.err" >&2; die "$label failed"; }
	end=$EPOCHREALTIME
	awk -v s="$start" -v e="$end" '{printf "%.3f %s %.2f\n", e - s, $1, $2 + $3}' "$WORK/time"
}

best_cc_t=999999 best_cc_m=0 best_s_t=999999 best_s_m=0 cpu_cc=0 cpu_s=0
for i in $(seq "$RUNS"); do
	read -r t m c < <(measure ccusage "$CCUSAGE" session --json --offline -z UTC)
	echo "run $i: ccusage   ${t}s  $((m / 1024)) MB  cpu ${c}s"
	if awk "BEGIN{exit !($t < $best_cc_t)}"; then best_cc_t=$t; best_cc_m=$m; fi
	cpu_cc=$(awk "BEGIN{print $cpu_cc + $c}")
	read -r t m c < <(measure sessctl "$WORK/sessctl" stats --all --no-progress --no-index --json)
	echo "run $i: sessctl   ${t}s  $((m / 1024)) MB  cpu ${c}s"
	if awk "BEGIN{exit !($t < $best_s_t)}"; then best_s_t=$t; fi
	if [ "$m" -gt "$best_s_m" ]; then best_s_m=$m; fi # the worst peak RSS counts
	cpu_s=$(awk "BEGIN{print $cpu_s + $c}")
done

# warm: through the index, after one run that builds it; the output must be
# the cold one's
cp "$WORK/sessctl.out" "$WORK/cold.out"
measure sessctl "$WORK/sessctl" stats --all --no-progress --json >/dev/null
best_w_t=999999 best_w_m=0
for i in $(seq "$RUNS"); do
	read -r t m c < <(measure sessctl "$WORK/sessctl" stats --all --no-progress --json)
	echo "run $i: sessctl warm ${t}s  $((m / 1024)) MB  cpu ${c}s"
	if awk "BEGIN{exit !($t < $best_w_t)}"; then best_w_t=$t; fi
	if [ "$m" -gt "$best_w_m" ]; then best_w_m=$m; fi
done
cmp -s "$WORK/cold.out" "$WORK/sessctl.out" || die "stats --all through the index differs from --no-index"

# the two must report the same tokens (as_ccusage: ccusage's rules)
python3 - "$WORK/sessctl.out" "$WORK/ccusage.out" <<'PY' || die "sessctl and ccusage totals differ on the bench corpus"
import json, sys
s = json.load(open(sys.argv[1]))["as_ccusage"]
c = json.load(open(sys.argv[2]))["totals"]
mine = (s.get("input_tokens", 0), s.get("output_tokens", 0), s.get("cache_read_tokens", 0), s.get("cache_creation_tokens", 0))
theirs = (c["inputTokens"], c["outputTokens"], c["cacheReadTokens"], c["cacheCreationTokens"])
print("totals: sessctl %s, ccusage %s" % (mine, theirs))
sys.exit(mine != theirs)
PY

bytes=$(du -sb "$corpus" | cut -f1)
ratio_t=$(awk "BEGIN{printf \"%.2f\", $best_cc_t / ($best_s_t > 0 ? $best_s_t : 0.001)}")
ratio_m=$(awk "BEGIN{printf \"%.2f\", $best_cc_m / $best_s_m}")
echo
echo "corpus: $corpus ($((bytes / 1048576)) MiB, $(find "$corpus" -name '*.jsonl' | wc -l) files), $(nproc) CPUs, best of $RUNS"
echo "ccusage $CCV session --json --offline: ${best_cc_t}s, peak RSS $((best_cc_m / 1024)) MB"
echo "sessctl stats --all --json:            ${best_s_t}s, peak RSS $((best_s_m / 1024)) MB (worst run)"
echo "sessctl stats --all --json, warm:      ${best_w_t}s, peak RSS $((best_w_m / 1024)) MB (worst run; the index, docs/index.md)"
echo "time ratio (ccusage/sessctl):   ${ratio_t}x (target >= 3x)"
echo "time ratio (cold/warm sessctl): $(awk "BEGIN{printf \"%.2f\", $best_s_t / ($best_w_t > 0 ? $best_w_t : 0.001)}")x (issue 15's target >= 10x on 1 GB)"
echo "memory ratio (ccusage/sessctl): ${ratio_m}x (target: sessctl < 32 MB)"
echo "cpu time ratio (user+sys, all runs): $(awk "BEGIN{printf \"%.2f\", $cpu_cc / ($cpu_s > 0 ? $cpu_s : 0.01)}")x (less sensitive to other load on the machine; load average now $(cut -d' ' -f1 /proc/loadavg))"
ok=1
awk "BEGIN{exit !($ratio_t >= 3)}" || { echo "bench-stats: FAIL: less than 3x faster than ccusage"; ok=0; }
[ "$best_s_m" -lt $((32 * 1024)) ] || { echo "bench-stats: FAIL: peak RSS not under 32 MB"; ok=0; }

# --- stats --all over 1 GB: cold, warm, after one appended line (issue 15:
# warm >= 10x, aim <= 100 ms; after an append >= 5x) ---
WARM_SIZE=${BENCH_WARM_SIZE:-1GB}
if [ "$WARM_SIZE" != 0 ]; then
	big=$CACHE/corpus-claude-$WARM_SIZE-500
	if [ ! -d "$big/projects" ]; then
		rm -rf "$big"
		(cd "$REPO" && go run ./internal/gen claude -out "$big" -size "$WARM_SIZE" -files 500) >&2
	fi
	# a copy: the appends below must not change the cached corpus
	cp -a "$big" "$WORK/big"
	find "$WORK/big" -name '*.jsonl' -print0 | xargs -0 cat >/dev/null
	export XDG_CACHE_HOME="$WORK/cache-big"
	# the files sessions append to: a mid-sized transcript of a session that
	# shares no message with another (what a run after an append works out
	# alone), and one of a forked session (which takes the whole run)
	read -r grow forkgrow < <(python3 - "$WORK/big/projects" <<'PY'
import glob, json, os, sys, collections
root = sys.argv[1]
holders = collections.defaultdict(set)
for p in glob.glob(os.path.join(root, "**", "*.jsonl"), recursive=True):
    sid = os.path.relpath(p, root).split(os.sep)[1].split(".")[0]
    with open(p) as f:
        for line in f:
            try:
                m = json.loads(line).get("message")
            except ValueError:
                continue
            if isinstance(m, dict) and m.get("id"):
                holders[m["id"]].add(sid)
shared = {s for ss in holders.values() if len(ss) > 1 for s in ss}
mains = sorted((os.path.getsize(p), p) for p in glob.glob(os.path.join(root, "*", "*.jsonl")))
own = [p for _, p in mains if os.path.basename(p)[:-6] not in shared]
forked = [p for _, p in mains if os.path.basename(p)[:-6] in shared]
print(own[len(own) // 2], forked[len(forked) // 2])
PY
)
	[ -f "$grow" ] && [ -f "$forkgrow" ] || die "no transcript to append to in the 1 GB store"
	appendone() { # file n: one more request, a new id each time, as a client writes it
		printf '{"type":"assistant","sessionId":"bench","uuid":"bench-%s","timestamp":"2026-11-02T09:00:00.000Z","requestId":"req_bench%s","message":{"id":"msg_bench%s","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"appended"}],"usage":{"input_tokens":1000,"output_tokens":2000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}\n' "$2" "$2" "$2" >>"$1"
	}
	CLAUDE_CONFIG_DIR="$WORK/big" measure big-first "$WORK/sessctl" stats --all --no-progress --json >/dev/null # builds the index
	best_c_t=999999 best_c_m=0 best_w_t=999999 best_w_m=0 cpu_c=0 cpu_w=0
	for i in $(seq "$RUNS"); do
		read -r t m c < <(CLAUDE_CONFIG_DIR="$WORK/big" measure big-cold "$WORK/sessctl" stats --all --no-progress --no-index --json)
		if awk "BEGIN{exit !($t < $best_c_t)}"; then best_c_t=$t; fi
		if [ "$m" -gt "$best_c_m" ]; then best_c_m=$m; fi
		cpu_c=$(awk "BEGIN{print $cpu_c + $c}")
		read -r t m c < <(CLAUDE_CONFIG_DIR="$WORK/big" measure big-warm "$WORK/sessctl" stats --all --no-progress --json)
		if awk "BEGIN{exit !($t < $best_w_t)}"; then best_w_t=$t; fi
		if [ "$m" -gt "$best_w_m" ]; then best_w_m=$m; fi
		cpu_w=$(awk "BEGIN{print $cpu_w + $c}")
		cmp -s "$WORK/big-cold.out" "$WORK/big-warm.out" || die "stats --all over 1 GB through the index differs from --no-index"
	done
	cp "$WORK/big-cold.out" "$WORK/big-before.out"
	# appends: each run after one more line in the file, and a --no-index
	# run beside it (the same output, and the CPU time of the ratio)
	appends() { # label file; sets best_a_t best_a_m cpu_a cpu_ac
		best_a_t=999999 best_a_m=0 cpu_a=0 cpu_ac=0
		for i in $(seq "$RUNS"); do
			appendone "$2" "$1-$i"
			read -r t m c < <(CLAUDE_CONFIG_DIR="$WORK/big" measure big-append "$WORK/sessctl" stats --all --no-progress --json)
			if awk "BEGIN{exit !($t < $best_a_t)}"; then best_a_t=$t; fi
			if [ "$m" -gt "$best_a_m" ]; then best_a_m=$m; fi
			cpu_a=$(awk "BEGIN{print $cpu_a + $c}")
			read -r t m c < <(CLAUDE_CONFIG_DIR="$WORK/big" measure big-append-cold "$WORK/sessctl" stats --all --no-progress --no-index --json)
			cpu_ac=$(awk "BEGIN{print $cpu_ac + $c}")
			cmp -s "$WORK/big-append.out" "$WORK/big-append-cold.out" || die "stats --all after an append ($1) differs from --no-index"
		done
		cmp -s "$WORK/big-before.out" "$WORK/big-append.out" && die "the appended lines ($1) changed nothing: the measurement proves nothing"
		cp "$WORK/big-append.out" "$WORK/big-before.out"
	}
	appends own "$grow"
	own_t=$best_a_t own_m=$best_a_m own_cpu=$(awk "BEGIN{printf \"%.2f\", $cpu_ac / ($cpu_a > 0 ? $cpu_a : 0.01)}")
	appends fork "$forkgrow"
	fork_t=$best_a_t fork_m=$best_a_m fork_cpu=$(awk "BEGIN{printf \"%.2f\", $cpu_ac / ($cpu_a > 0 ? $cpu_a : 0.01)}")
	best_a_t=$own_t best_a_m=$own_m
	echo
	echo "1 GB store: $big ($(($(du -sb "$big" | cut -f1) / 1048576)) MiB, 500 files), best of $RUNS"
	echo "sessctl stats --all --json, cold (--no-index): ${best_c_t}s, peak RSS $((best_c_m / 1024)) MB (worst run)"
	echo "sessctl stats --all --json, warm:              ${best_w_t}s, peak RSS $((best_w_m / 1024)) MB (worst run)"
	echo "sessctl stats --all --json, after an append:   ${own_t}s, peak RSS $((own_m / 1024)) MB (worst run; a session of its own)"
	echo "  ... after an append to a forked session:       ${fork_t}s, peak RSS $((fork_m / 1024)) MB (worst run; the whole run is worked out)"
	echo "1 GB time ratio (cold/warm): $(awk "BEGIN{printf \"%.2f\", $best_c_t / ($best_w_t > 0 ? $best_w_t : 0.001)}")x, cpu $(awk "BEGIN{printf \"%.2f\", $cpu_c / ($cpu_w > 0 ? $cpu_w : 0.01)}")x (issue 15's target >= 10x)"
	echo "1 GB time ratio (cold/after an append): $(awk "BEGIN{printf \"%.2f\", $best_c_t / ($own_t > 0 ? $own_t : 0.001)}")x, cpu ${own_cpu}x (issue 15's target >= 5x); to a forked session $(awk "BEGIN{printf \"%.2f\", $best_c_t / ($fork_t > 0 ? $fork_t : 0.001)}")x, cpu ${fork_cpu}x"
	rm -rf "$WORK/big"
	export XDG_CACHE_HOME="$WORK/cache"
fi

# --- Codex: stats --all against ccusage codex session (issue 15: >= 3x) ---
# At the issue's own size (its table: 500 MB of Codex rollouts) and at the
# 50 MB of the comparison scripts, where the start-up of each process (about
# 15 ms of sessctl's 45) is most of the run.
codex_bench() { # size files
	codex=$CACHE/corpus-codex-$1-$2 # 50MB-60: the corpus of scripts/lib/corpora.sh
	if [ ! -d "$codex/sessions" ]; then
		rm -rf "$codex"
		(cd "$REPO" && go run ./internal/gen codex -out "$codex" -size "$1" -files "$2") >&2
	fi
	find "$codex" -name '*.jsonl' -print0 | xargs -0 cat >/dev/null
	best_cc_t=999999 best_cc_m=0 best_s_t=999999 best_s_m=0 cpu_cc=0 cpu_s=0
	for i in $(seq "$RUNS"); do
		read -r t m c < <(CODEX_HOME="$codex" CLAUDE_CONFIG_DIR="$WORK/home" measure ccusage-codex "$CCUSAGE" codex session --json --offline -z UTC)
		if awk "BEGIN{exit !($t < $best_cc_t)}"; then best_cc_t=$t; best_cc_m=$m; fi
		cpu_cc=$(awk "BEGIN{print $cpu_cc + $c}")
		read -r t m c < <(CODEX_HOME="$codex" CLAUDE_CONFIG_DIR="$WORK/home" measure sessctl-codex "$WORK/sessctl" stats --all --no-progress --no-index --json)
		if awk "BEGIN{exit !($t < $best_s_t)}"; then best_s_t=$t; fi
		if [ "$m" -gt "$best_s_m" ]; then best_s_m=$m; fi
		cpu_s=$(awk "BEGIN{print $cpu_s + $c}")
	done
	python3 - "$WORK/sessctl-codex.out" "$WORK/ccusage-codex.out" <<'PY' || die "sessctl and ccusage codex totals differ on the Codex corpus $codex"
import json, sys
s = json.load(open(sys.argv[1]))["as_ccusage"]
c = json.load(open(sys.argv[2]))["totals"]
mine = (s.get("input_tokens", 0), s.get("output_tokens", 0), s.get("cache_read_tokens", 0))
theirs = (c["inputTokens"], c["outputTokens"], c["cacheReadTokens"])
sys.exit(mine != theirs)
PY
	echo
	echo "codex corpus: $codex ($(($(du -sb "$codex" | cut -f1) / 1048576)) MiB, $(find "$codex" -name '*.jsonl' | wc -l) files), best of $RUNS"
	echo "ccusage $CCV codex session --json --offline: ${best_cc_t}s, peak RSS $((best_cc_m / 1024)) MB"
	echo "sessctl stats --all --json (--no-index):      ${best_s_t}s, peak RSS $((best_s_m / 1024)) MB (worst run)"
	echo "codex $1 time ratio (ccusage/sessctl): $(awk "BEGIN{printf \"%.2f\", $best_cc_t / ($best_s_t > 0 ? $best_s_t : 0.001)}")x, cpu $(awk "BEGIN{printf \"%.2f\", $cpu_cc / ($cpu_s > 0 ? $cpu_s : 0.01)}")x$3"
}
if [ "${BENCH_CODEX:-1}" != 0 ]; then
	codex_bench 500MB 300 " (issue 15's target >= 3x, at the issue's 500 MB)"
	codex_bench 50MB 60 " (start-up dominates)"
fi

# --- ls over many sessions: cold and warm (issue 15: >= 10x, <= 128 MB;
# a run over 128 MiB fails the bench) ---
LS_FILES=${BENCH_LS_FILES:-20000}
if [ "$LS_FILES" != 0 ]; then
	store=$CACHE/ls-claude-$LS_FILES
	if [ ! -d "$store/projects" ]; then
		rm -rf "$store"
		# small sessions: the generator's smallest files (about 30 KB each)
		(cd "$REPO" && go run ./internal/gen claude -out "$store" -size "$((LS_FILES * 6 / 1000))MB" -files "$LS_FILES") >&2
	fi
	unset CLAUDE_CONFIG_DIR
	best_c_t=999999 best_c_m=0 best_w_t=999999 best_w_m=0 best_j_m=0 cpu_c=0 cpu_w=0
	read -r t first_m c < <(measure ls-first "$WORK/sessctl" ls --root "$store" --json) # builds the index
	# the first ls of the table, which keeps its rows (session.Memo): the
	# runs below are "the second ls" of issue 15
	measure ls-table-first "$WORK/sessctl" ls --root "$store" >/dev/null
	for i in $(seq "${LS_RUNS:-2}"); do
		read -r t m c < <(measure ls-cold "$WORK/sessctl" --no-index ls --root "$store")
		if awk "BEGIN{exit !($t < $best_c_t)}"; then best_c_t=$t; fi
		if [ "$m" -gt "$best_c_m" ]; then best_c_m=$m; fi
		cpu_c=$(awk "BEGIN{print $cpu_c + $c}")
		read -r t m c < <(measure ls-warm "$WORK/sessctl" ls --root "$store")
		if awk "BEGIN{exit !($t < $best_w_t)}"; then best_w_t=$t; fi
		if [ "$m" -gt "$best_w_m" ]; then best_w_m=$m; fi
		cpu_w=$(awk "BEGIN{print $cpu_w + $c}")
	done
	read -r t m c < <(measure ls-warm-json "$WORK/sessctl" ls --root "$store" --json)
	best_j_m=$m
	cmp -s "$WORK/ls-first.out" "$WORK/ls-warm-json.out" || die "ls --json through the index differs from the run that built it"
	# the table shows ages ("8h ago"), which a generated store's files
	# cross all the time in its first days: compared without them
	ages='s/([0-9]+[mhd] ago|just now)/AGE/g'
	cmp -s <(sed -E "$ages" "$WORK/ls-cold.out") <(sed -E "$ages" "$WORK/ls-warm.out") ||
		die "ls through the index differs from ls --no-index"
	echo
	echo "ls store: $store ($LS_FILES sessions, $(find "$store" -name '*.jsonl' | wc -l) transcripts), best of ${LS_RUNS:-2}"
	echo "sessctl ls, cold (--no-index): ${best_c_t}s, peak RSS $((best_c_m / 1024)) MB (worst run)"
	echo "sessctl ls, warm:              ${best_w_t}s, peak RSS $((best_w_m / 1024)) MB (worst run; --json $((best_j_m / 1024)) MB)"
	echo "sessctl ls --json, first run:  peak RSS $((first_m / 1024)) MB (it builds the index)"
	echo "ls time ratio (cold/warm): $(awk "BEGIN{printf \"%.2f\", $best_c_t / ($best_w_t > 0 ? $best_w_t : 0.001)}")x, cpu $(awk "BEGIN{printf \"%.2f\", $cpu_c / ($cpu_w > 0 ? $cpu_w : 0.01)}")x (issue 15's target >= 10x over 100,000 sessions, peak RSS <= 128 MB)"
	# every run within 128 MiB, whatever the store's size (BENCH_LS_FILES)
	for m in "$first_m" "$best_c_m" "$best_w_m" "$best_j_m"; do
		if [ "$m" -gt $((128 * 1024)) ]; then
			echo "bench-stats: FAIL: an ls run peaked at $((m / 1024)) MB, over 128"
			ok=0
		fi
	done
fi

[ $ok = 1 ] && echo "bench-stats: ok: targets met"
[ $ok = 1 ]
