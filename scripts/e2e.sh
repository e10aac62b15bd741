#!/usr/bin/env bash
# Real-client end-to-end tests (docs/e2e.md).
#
# Installs the pinned Claude Code and Codex CLI with npm into a cache directory outside the
# repository (once; reused while the versions match), then runs
#   SESSCTL_E2E=1 go test -count=1 -v ./e2e/...
# against a loopback fake model server. Fails if a test failed, if any test was skipped (a
# skipped e2e test proves nothing), or if no test ran.
#
# Needs: go, node and npm, and the npm registry (for the first install only). No network is
# used while the tests run.
#
# Usage: scripts/e2e.sh [extra go test flags, e.g. -run 'Codex']
# Environment:
#   SESSCTL_E2E_CLIENTS  install directory
#                        (default ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/e2e-clients)
#   SESSCTL_E2E_KEEP     keep each test's HOME, project and request log under this directory
set -euo pipefail

readonly CLAUDE_VERSION=2.1.197
readonly CODEX_VERSION=0.169.0

die() {
	echo "e2e.sh: error: $*" >&2
	exit 1
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
clients=${SESSCTL_E2E_CLIENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/e2e-clients}

for tool in go node npm; do
	command -v "$tool" >/dev/null || die "$tool is not on PATH"
done

mkdir -p "$clients"
clients=$(cd "$clients" && pwd -P)
case "$clients/" in
"$repo"/*) die "the clients directory $clients is inside the repository; set SESSCTL_E2E_CLIENTS elsewhere" ;;
esac

# installed PACKAGE prints the installed version of PACKAGE, or nothing.
installed() {
	local pj="$clients/node_modules/$1/package.json"
	[ -f "$pj" ] && node -p 'require(process.argv[1]).version' "$pj" 2>/dev/null || true
}

if [ "$(installed @anthropic-ai/claude-code)" != "$CLAUDE_VERSION" ] ||
	[ "$(installed @openai/codex)" != "$CODEX_VERSION" ] ||
	[ ! -x "$clients/node_modules/.bin/claude" ] || [ ! -x "$clients/node_modules/.bin/codex" ]; then
	echo "e2e.sh: installing @anthropic-ai/claude-code@$CLAUDE_VERSION and @openai/codex@$CODEX_VERSION into $clients"
	cat >"$clients/package.json" <<EOF
{
  "name": "sessctl-e2e-clients",
  "private": true,
  "description": "Pinned real clients for sessctl's e2e tests (written by scripts/e2e.sh)",
  "dependencies": {
    "@anthropic-ai/claude-code": "$CLAUDE_VERSION",
    "@openai/codex": "$CODEX_VERSION"
  }
}
EOF
	# The launchers need their optional platform packages (the native binaries): never omit
	# optional dependencies, whatever the user's npm configuration says.
	(cd "$clients" && npm install --no-audit --no-fund --include=optional) ||
		die "npm install failed in $clients"
fi

# The launchers must start and report the pinned versions.
claude_v=$("$clients/node_modules/.bin/claude" --version </dev/null 2>&1) || die "claude --version failed: $claude_v"
codex_v=$("$clients/node_modules/.bin/codex" --version </dev/null 2>&1) || die "codex --version failed: $codex_v"
[[ $claude_v == *"$CLAUDE_VERSION"* ]] || die "claude --version says '$claude_v', want $CLAUDE_VERSION"
[[ $codex_v == *"$CODEX_VERSION"* ]] || die "codex --version says '$codex_v', want $CODEX_VERSION"
echo "e2e.sh: clients: claude $claude_v; $codex_v"

log=$(mktemp "${TMPDIR:-/tmp}/sessctl-e2e.XXXXXX")
trap 'rm -f "$log"' EXIT

cd "$repo"
set +e
SESSCTL_E2E=1 SESSCTL_E2E_CLIENTS="$clients" \
	go test -count=1 -v -timeout 30m ./e2e/... "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

passed=$(grep -cE -- '^ *--- PASS' "$log" || true)
skipped=$(grep -cE -- '^ *--- SKIP' "$log" || true)
failed=$(grep -cE -- '^ *--- FAIL' "$log" || true)

[ "$status" -eq 0 ] || die "go test failed (exit $status, $failed failed tests)"
[ "$skipped" -eq 0 ] || die "$skipped tests were skipped; an e2e run with skips proves nothing"
[ "$passed" -gt 0 ] || die "no test ran"
if grep -q -e '\[no test files\]' -e 'no tests to run' "$log"; then
	die "a package had no tests to run"
fi
echo "e2e.sh: ok: $passed tests passed, none skipped, in ${SECONDS}s"
