#!/usr/bin/env bash
# compare-ccusage.sh — sessctl stats and ccusage must agree on recorded usage.
#
# Installs ccusage 20.0.24 (the npm package plus its native Linux binary,
# pinned) into a cache directory, then runs, on the same data,
#   ccusage session --json --offline -z UTC      (CLAUDE_CONFIG_DIR / CODEX_HOME)
#   sessctl stats --all --json
# and fails on any difference. Data sets: the shared samples (real clients,
# public Claude Code and Codex files), the Claude Code 2.1.330 sessions in
# testdata/claude-2.1.330, and a generated corpus
# (internal/gen, with the -quirks project of lines ccusage drops).
#
# Where ccusage is silently wrong (it drops lines written with a space after
# the colon, and lines where some keys are null), sessctl counts the line and
# reports it as "counted_not_by_ccusage"; its JSON also carries "as_ccusage",
# the totals ccusage's rules give. sessctl also counts the spend that only
# its rotations hold (turns a revert removed; "in_rotations"), which ccusage
# does not read. Those sessions are listed here as known, documented
# differences (docs/stats.md), and their as_ccusage must still equal
# ccusage exactly. So are Codex 0.169 sessions whose per-response
# token_usage_records (sessctl's count) and cumulative token_count events
# (ccusage's) disagree ("views_differ"). The "rotations" data set checks that ccusage reads no
# rotation: the real-client stores with files reverted by sessctl's naming
# (<file>.N holding the whole original, the file a prefix of it).
#
#   scripts/compare-ccusage.sh             all data sets
#   scripts/compare-ccusage.sh --install   only install ccusage; print its path
# Environment: SAMPLES (default ../shared/samples), SESSCTL_CACHE (default
# ~/.cache/sessctl), CORPUS_SIZE (default 200MB), CORPUS_FILES (150).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SESSCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl}
CCV=20.0.24
SAMPLES=${SAMPLES:-$REPO/../shared/samples}
CORPUS_SIZE=${CORPUS_SIZE:-200MB}
CORPUS_FILES=${CORPUS_FILES:-150}

die() { echo "compare-ccusage: error: $*" >&2; exit 2; }

install_ccusage() {
	local dir=$CACHE/ccusage-$CCV
	local bin=$dir/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
	if [ ! -x "$bin" ]; then
		command -v npm >/dev/null || die "npm is needed to install ccusage $CCV"
		mkdir -p "$dir"
		echo "installing ccusage $CCV into $dir" >&2
		npm install --silent --no-save --no-audit --no-fund --prefix "$dir" \
			"ccusage@$CCV" "@ccusage/ccusage-linux-x64@$CCV" >&2 ||
			die "npm install of ccusage@$CCV failed"
		[ -f "$bin" ] || die "the native package @ccusage/ccusage-linux-x64@$CCV has no bin/ccusage"
		chmod +x "$bin" # npm does not mark the native binary executable
	fi
	"$bin" --version >/dev/null 2>&1 || die "$bin does not run"
	echo "$bin"
}

CCUSAGE=$(install_ccusage)
if [ "${1:-}" = "--install" ]; then
	echo "$CCUSAGE"
	exit 0
fi
command -v python3 >/dev/null || die "python3 is needed to compare the JSON reports"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/compare-ccusage.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
(cd "$REPO" && go build -o "$WORK/sessctl" ./cmd/sessctl)

cat >"$WORK/compare.py" <<'PY'
import json, os, sys

name, sessctl_json, ccusage_json = sys.argv[1:4]
d = json.load(open(sessctl_json))
c = json.load(open(ccusage_json))
FIELDS = [("input_tokens", "inputTokens"), ("output_tokens", "outputTokens"),
          ("cache_read_tokens", "cacheReadTokens"), ("cache_creation_tokens", "cacheCreationTokens")]

cc = {}
for row in c.get("session", []):
    if row["agent"] in ("claude", "codex"):
        cc[(row["agent"], row["period"])] = row

def claude_key(path):
    # ccusage's session id: the file stem, or the parent directory for
    # <session>/chat.jsonl and <session>/subagents/*.jsonl
    base = os.path.basename(path)
    parent = os.path.basename(os.path.dirname(path))
    if parent == "subagents":
        return os.path.basename(os.path.dirname(os.path.dirname(path)))
    if base == "chat.jsonl":
        return parent
    return base[:-len(".jsonl")]

def codex_keys(path):
    stem = os.path.basename(path)[:-len(".jsonl")]
    return [k for k in cc if k[0] == "codex" and os.path.basename(k[1]) == stem]

def vec(u):
    return tuple(u.get(f, 0) for f, _ in FIELDS)

used, problems, known, checked = set(), [], [], 0
cost_ours_total, cost_theirs_total = [0.0], [0.0]
for s in d["sessions"]:
    if s["agent"] not in ("claude", "codex"):
        continue
    keys = set()
    for f in s["files"]:
        if not f.endswith(".jsonl"):
            continue # a rotation: ccusage reads *.jsonl only
        if s["agent"] == "codex":
            keys.update(codex_keys(f))
        else:
            keys.add(("claude", claude_key(f)))
    theirs = [0, 0, 0, 0]
    models = {}
    their_cost = 0.0
    for k in keys:
        if k in cc:
            used.add(k)
            their_cost += cc[k].get("totalCost", 0)
            for i, (_, cf) in enumerate(FIELDS):
                theirs[i] += cc[k][cf]
            for mb in cc[k].get("modelBreakdowns", []):
                m = models.setdefault(mb["modelName"], [0, 0, 0, 0])
                for i, (_, cf) in enumerate(FIELDS):
                    m[i] += mb[cf]
    theirs = tuple(theirs)
    ours, as_cc = vec(s["recorded"]), vec(s.get("as_ccusage") or {})
    label = "%s %s" % (s["agent"], s["main"])
    checked += 1
    if as_cc != theirs:
        problems.append("%s: ccusage %s, sessctl as_ccusage %s" % (label, theirs, as_cc))
        continue
    # cost: sessctl prices as_ccusage's requests with its embedded table
    # (docs/cost.md); ccusage counts a model it has no price for as $0,
    # sessctl leaves it out of cost_usd and lists it, so both agree
    our_cost = (s.get("as_ccusage") or {}).get("cost_usd", 0.0)
    cost_ours_total[0] += our_cost
    cost_theirs_total[0] += their_cost
    if abs(our_cost - their_cost) > max(1e-6, 0.005 * max(our_cost, their_cost)):
        problems.append("%s: cost: ccusage $%.6f, sessctl as_ccusage $%.6f" % (label, their_cost, our_cost))
    our_models = {m: list(vec(u)) for m, u in (s.get("as_ccusage") or {}).get("by_model", {}).items() if sum(vec(u))}
    their_models = {m: v for m, v in models.items() if sum(v)}
    if our_models != their_models:
        problems.append("%s: models differ: ccusage %s, sessctl %s" % (label, their_models, our_models))
    quirks = s["counted_not_by_ccusage"] + s["counted_only_by_ccusage"]
    rot = vec(s.get("in_rotations") or {})
    # Codex 0.169: sessctl counts the per-response token_usage_records,
    # ccusage the cumulative token_count events; in the live files they
    # differ by exactly per_response_view_tokens - cumulative_view_tokens
    # (docs/stats.md)
    views = s.get("per_response_view_tokens", 0) - s.get("cumulative_view_tokens", 0)
    if ours != theirs and rot != (0, 0, 0, 0):
        known.append("%s: sessctl %s vs ccusage %s (%s only in rotations, which ccusage does not read)" % (label, ours, theirs, rot))
        ours = tuple(o - r for o, r in zip(ours, rot))
        if views and sum(ours) - sum(theirs) == views:
            known.append("%s: without its rotations sessctl %s vs ccusage %s (%s)" % (label, ours, theirs, s["views_differ"]))
            continue
        if quirks == 0 and ours != theirs:
            problems.append("%s: without its rotations sessctl %s, ccusage %s" % (label, ours, theirs))
            continue
    if ours != theirs and views and sum(ours) - sum(theirs) == views:
        known.append("%s: sessctl %s vs ccusage %s (%s)" % (label, ours, theirs, s["views_differ"]))
        continue
    if ours != theirs:
        if quirks == 0:
            problems.append("%s: ccusage %s, sessctl %s, and no line explains it" % (label, theirs, ours))
        else:
            reasons = sorted({l["reason"] for l in s.get("counted_not_by_ccusage_lines") or []} |
                             {l["reason"] for l in s.get("rejected") or []})
            known.append("%s: sessctl %s vs ccusage %s (%d lines counted only by sessctl, %d only by ccusage: %s)" %
                         (label, ours, theirs, s["counted_not_by_ccusage"], s["counted_only_by_ccusage"], "; ".join(reasons)))
for k, row in cc.items():
    if k not in used and row["totalTokens"]:
        problems.append("ccusage reports %s %s (%d tokens) that sessctl has no session for" % (k[0], k[1], row["totalTokens"]))

print("%s: %d sessions compared, %d differences, %d known (documented) differences; cost: ccusage $%.2f, sessctl $%.2f" %
      (name, checked, len(problems), len(known), cost_theirs_total[0], cost_ours_total[0]))
for k in known:
    print("  known: " + k)
for p in problems:
    print("  DIFFERENCE: " + p)
sys.exit(1 if problems else 0)
PY

# repaired: damage as clients leave it, then `sessctl repair`, must count
# as the file without the bytes that were lost (docs/repair.md). In the
# real-client stores, the line before the last assistant line with usage is
# torn and glued to it (Claude Code's append onto a torn line) and an
# assistant line is written twice (Codex: an event line); the expected tree
# has the torn line removed and no double write. Both trees are repaired
# (the samples hold damage of their own), then ccusage and sessctl must give
# each the same totals, session by session.
cat >"$WORK/damage.py" <<'PY'
import sys
path, mode = sys.argv[1:3]
lines = open(path, "rb").read().split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
usage = [i for i, l in enumerate(lines) if i > 1 and (b'"usage":{' in l or b'"token_count"' in l)]
if not usage:
    sys.exit(3)
k = usage[-1] - 1  # torn, glued onto the line with usage after it
dup = usage[0]
if mode == "expected":
    out = lines[:k] + lines[k + 1:]
else:
    torn = lines[k][: max(1, len(lines[k]) // 2)]
    out = lines[:dup + 1] + [lines[dup]] + lines[dup + 1:k] + [torn + lines[k + 1]] + lines[k + 2:]
    if dup >= k:
        sys.exit(3)
open(path, "wb").write(b"\n".join(out) + b"\n")
PY
cat >"$WORK/same.py" <<'PY'
import json, sys
name, a, b = sys.argv[1:4]
def load(p):
    d = json.load(open(p))
    if "sessions" in d:  # sessctl
        return {s["main"].split("/repaired-")[1].split("/", 1)[1]: tuple(s["recorded"].get(f, 0) for f in
                ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")) for s in d["sessions"]}
    return {(r["agent"], r["period"].rsplit("/", 1)[-1]): tuple(r[f] for f in
            ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens")) for r in d["session"]}
x, y = load(a), load(b)
diff = [k for k in set(x) | set(y) if x.get(k) != y.get(k)]
print("%s: %d sessions, %d differ" % (name, len(x), len(diff)))
for k in diff:
    print("  DIFFERENCE: %s: expected %s, repaired %s" % (k, x.get(k), y.get(k)))
sys.exit(1 if diff or not x else 0)
PY
repaired_set() {
	local t f n=0
	for t in expected damaged; do
		cp -r "$SAMPLES/real-clients/claude-home/claude" "$WORK/repaired-$t-claude"
		cp -r "$SAMPLES/real-clients/codex-home/codex" "$WORK/repaired-$t-codex"
	done
	for f in $(cd "$WORK/repaired-expected-claude" && find projects -name '*.jsonl' -not -path '*/subagents/*' | sort | head -4) \
		$(cd "$WORK/repaired-expected-codex" && find sessions -name '*.jsonl' | sort | head -4); do
		case $f in projects/*) t=claude ;; *) t=codex ;; esac
		python3 "$WORK/damage.py" "$WORK/repaired-damaged-$t/$f" damaged || continue
		python3 "$WORK/damage.py" "$WORK/repaired-expected-$t/$f" expected
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "repaired: no sample file to damage"
	for t in expected damaged; do
		# written long ago: not live
		find "$WORK/repaired-$t-claude/projects" "$WORK/repaired-$t-codex/sessions" -name '*.jsonl' -exec touch -d 2020-01-01T00:00:00Z {} +
		find "$WORK/repaired-$t-claude/projects" "$WORK/repaired-$t-codex/sessions" -name '*.jsonl' -not -path '*/subagents/*' \
			-exec "$WORK/sessctl" repair {} + >"$WORK/repair-$t.log" 2>&1 ||
			{ cat "$WORK/repair-$t.log" >&2; die "sessctl repair failed on the $t tree"; }
		local env=(-u CLAUDE_CONFIG_DIR -u CODEX_HOME HOME="$WORK/home" NO_COLOR=1 TZ=UTC
			CLAUDE_CONFIG_DIR="$WORK/repaired-$t-claude" CODEX_HOME="$WORK/repaired-$t-codex")
		env "${env[@]}" "$CCUSAGE" session --json --offline -z UTC >"$WORK/repaired-$t.ccusage.json" 2>/dev/null ||
			die "ccusage failed on the repaired $t tree"
		env "${env[@]}" "$WORK/sessctl" stats --all --no-progress --json >"$WORK/repaired-$t.sessctl.json" ||
			die "sessctl stats failed on the repaired $t tree"
	done
	echo "repaired: $n files damaged (a torn line glued to the next, a double write) and repaired"
	python3 "$WORK/same.py" "repaired (ccusage)" "$WORK/repaired-expected.ccusage.json" "$WORK/repaired-damaged.ccusage.json" || status=1
	python3 "$WORK/same.py" "repaired (sessctl stats)" "$WORK/repaired-expected.sessctl.json" "$WORK/repaired-damaged.sessctl.json" || status=1
}

status=0
compare() { # name claude_dir codex_dir
	local name=$1 claude=$2 codex=$3
	local env=(-u CLAUDE_CONFIG_DIR -u CODEX_HOME -u KIMI_SHARE_DIR -u KIMI_DATA_DIR HOME="$WORK/home" NO_COLOR=1 TZ=UTC)
	# an empty HOME stands in for the data sets not given (ccusage exits 1
	# when CLAUDE_CONFIG_DIR has no projects/)
	[ -z "$claude" ] || env+=(CLAUDE_CONFIG_DIR="$claude")
	[ -z "$codex" ] || env+=(CODEX_HOME="$codex")
	env "${env[@]}" "$CCUSAGE" session --json --offline -z UTC >"$WORK/$name.ccusage.json" 2>"$WORK/$name.ccusage.err" ||
		{ cat "$WORK/$name.ccusage.err" >&2; die "ccusage failed on $name"; }
	env "${env[@]}" "$WORK/sessctl" stats --all --no-progress --json >"$WORK/$name.sessctl.json" ||
		die "sessctl stats failed on $name"
	python3 "$WORK/compare.py" "$name" "$WORK/$name.sessctl.json" "$WORK/$name.ccusage.json" || status=1
}

if [ -d "$SAMPLES" ]; then
	compare real-clients "$SAMPLES/real-clients/claude-home/claude" "$SAMPLES/real-clients/codex-home/codex"
	# public files: give them the layouts ccusage reads (projects/…, sessions/…)
	mkdir -p "$WORK/claude-public/projects" "$WORK/codex-public/sessions"
	for d in "$SAMPLES"/claude/claude-code-log/* "$SAMPLES"/claude/spotter/*/ "$SAMPLES"/claude/ccusage/*; do
		[ -d "$d" ] && cp -r "$d" "$WORK/claude-public/projects/$(basename "$d")"
	done
	mkdir -p "$WORK/claude-public/projects/spotter"
	cp "$SAMPLES"/claude/spotter/*.jsonl "$WORK/claude-public/projects/spotter/"
	cp -r "$SAMPLES"/codex/localpush/sessions/. "$SAMPLES"/codex/claude-code-log/sessions/. "$WORK/codex-public/sessions/"
	compare public-samples "$WORK/claude-public" "$WORK/codex-public"
	# rotations as sessctl's revert leaves them: <file>.N is the whole
	# original, the file keeps its first half
	cp -r "$SAMPLES/real-clients/claude-home/claude" "$WORK/claude-rot"
	cp -r "$SAMPLES/real-clients/codex-home/codex" "$WORK/codex-rot"
	for f in $(find "$WORK/claude-rot/projects" -name '*.jsonl' -size +4k | sort | head -3) \
		$(find "$WORK/codex-rot/sessions" -name '*.jsonl' -size +4k | sort | head -3); do
		cp "$f" "$f.1"
		head -n "$(($(wc -l <"$f") / 2))" "$f.1" >"$f"
	done
	compare rotations "$WORK/claude-rot" "$WORK/codex-rot"
	repaired_set
else
	echo "compare-ccusage: $SAMPLES not found; skipping the shared samples" >&2
fi

# Claude Code 2.1.330 (testdata/claude-2.1.330/README.md): sessions the real 2.1.330 wrote in the
# e2e harness, with its new record types (cost-state, api-request, …), one reverted by sessctl
# (its rotation holds the removed turns, which ccusage does not read)
compare claude-2.1.330 "$REPO/testdata/claude-2.1.330" ""

# shellcheck source=lib/corpora.sh
. "$REPO/scripts/lib/corpora.sh"
generated_corpora
compare generated "$corpus" "$codex"

if [ $status -ne 0 ]; then
	echo "compare-ccusage: FAIL: sessctl and ccusage $CCV disagree (see DIFFERENCE lines)" >&2
else
	echo "compare-ccusage: ok: sessctl and ccusage $CCV agree (known differences are documented in docs/stats.md)"
fi
exit $status
