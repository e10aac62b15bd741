#!/usr/bin/env bash
# e2e-otlp.sh — sessctl export --usage --otlp against the OpenTelemetry
# Collector's own OTLP receiver (go.opentelemetry.io/collector/receiver/
# otlpreceiver, in the separate Go module e2e/otlp so that the Collector's
# dependencies stay out of sessctl's go.mod).
#
# For each data set: stats --all --json gives the totals; a push to the
# receiver must add up to them (claude_code.token.usage and
# gen_ai.client.token.usage by token type, claude_code.cost.usage to a
# micro-dollar), with a point at every request's own time; a second run
# (cron, later) sends nothing; a push in two parts (one agent, then all)
# sends every request exactly once.
# Data sets: testdata (all four agents), the shared samples when present,
# and the generated Claude Code and Codex corpora of compare-ccusage.sh.
#
# Environment: SAMPLES (default ../shared/samples), SESSCTL_CACHE (default
# ~/.cache/sessctl), CORPUS_SIZE (default 200MB), CORPUS_FILES (150).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}
SAMPLES=${SAMPLES:-$REPO/../shared/samples}
CORPUS_SIZE=${CORPUS_SIZE:-200MB}
CORPUS_FILES=${CORPUS_FILES:-150}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/e2e-otlp.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
(cd "$REPO" && go build -o "$WORK/sessctl" ./cmd/sessctl)
export SESSCTL_BIN=$WORK/sessctl

status=0
# push NAME ROOT...: one data set
push() {
	local name=$1
	shift
	local roots
	roots=$(IFS=:; echo "$*")
	echo "== e2e-otlp: $name"
	if (cd "$REPO/e2e/otlp" && OTLP_ROOTS="$roots" go test -count=1 -v ./...) >"$WORK/$name.log" 2>&1; then
		grep -E '^(--- |ok)|otlp_test.go' "$WORK/$name.log"
	else
		cat "$WORK/$name.log"
		status=1
	fi
}

push testdata "$REPO/testdata/sessions" "$REPO/testdata/claude-2.1.330"
if [ -d "$SAMPLES" ]; then
	push samples "$SAMPLES/real-clients" "$SAMPLES/claude" "$SAMPLES/codex" "$SAMPLES/kimi"
else
	echo "e2e-otlp: $SAMPLES not found; skipping the shared samples" >&2
fi
# shellcheck source=lib/corpora.sh
. "$REPO/scripts/lib/corpora.sh"
generated_corpora
push generated "$corpus" "$codex"

if [ $status -ne 0 ]; then
	echo "e2e-otlp: FAIL" >&2
else
	echo "e2e-otlp: ok: the Collector's OTLP receiver got exactly what stats --all counts, each request once"
fi
exit $status
