#!/usr/bin/env bash
# ccusage-prices.sh — read back the prices ccusage 20.0.24 applies offline.
#
# For each model id given (default: those of pkg/usage/price/prices.json),
# writes one Claude Code session per kind of token (100,000 input, output,
# cache-write or cache-read tokens in one request; and 300,000 of each kind
# for the long-context tiers; a <model>-fast id is the model with
# usage.speed "fast"), runs `ccusage session --json --offline` on
# them, and prints one JSON object per session: model, kind, tokens, the
# dollars ccusage counted. pkg/usage/price's test holds the embedded table
# to these figures (testdata/ccusage-20.0.24.jsonl is this script's output).
#
#   scripts/ccusage-prices.sh [MODEL...] > pkg/usage/price/testdata/ccusage-20.0.24.jsonl
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CCUSAGE=$("$REPO/scripts/compare-ccusage.sh" --install)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ccusage-prices.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if [ $# -eq 0 ]; then
	set -- $(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["models"])))' "$REPO/pkg/usage/price/prices.json")
fi
python3 - "$WORK" "$@" >"$WORK/map.jsonl" <<'PY'
import json, os, sys, uuid
work, models = sys.argv[1], sys.argv[2:]
kinds = {"input": "input_tokens", "output": "output_tokens", "cache_write": "cache_creation_input_tokens", "cache_read": "cache_read_input_tokens"}
base = os.path.join(work, "claude", "projects", "-p")
os.makedirs(base, exist_ok=True)
for m in models:
    for kind, key in kinds.items():
        for n in (100000, 300000):
            sid = str(uuid.uuid5(uuid.NAMESPACE_URL, "%s/%s/%d" % (m, kind, n)))
            u = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            u[key] = n
            model = m
            if m.endswith("-fast"):  # sessctl's name for usage.speed "fast"
                model, u["speed"] = m[:-len("-fast")], "fast"
            rec = {"parentUuid": None, "isSidechain": False, "type": "assistant", "uuid": sid, "timestamp": "2026-11-01T00:00:00.000Z",
                   "sessionId": sid, "cwd": "/p", "version": "2.1.197", "requestId": "req_" + sid[:8],
                   "message": {"id": "msg_" + sid[:8], "type": "message", "role": "assistant", "model": model,
                               "content": [{"type": "text", "text": "x"}], "usage": u}}
            with open(os.path.join(base, sid + ".jsonl"), "w") as f:
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            print(json.dumps({"session": sid, "model": m, "kind": kind, "tokens": n}))
PY
env -u CODEX_HOME HOME="$WORK/home" CLAUDE_CONFIG_DIR="$WORK/claude" TZ=UTC "$CCUSAGE" session --json --offline -z UTC >"$WORK/out.json"
python3 - "$WORK/map.jsonl" "$WORK/out.json" <<'PY'
import json, sys
rows = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    rows[r["session"]] = r
for s in json.load(open(sys.argv[2]))["session"]:
    r = rows.get(s["period"])
    if r is None:
        continue
    r["usd"] = round(sum(b["cost"] for b in s.get("modelBreakdowns", [])), 9)
for r in sorted(rows.values(), key=lambda r: (r["model"], r["kind"], r["tokens"])):
    r.pop("session")
    print(json.dumps(r, sort_keys=True))
PY
