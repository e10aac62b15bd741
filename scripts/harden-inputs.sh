#!/usr/bin/env bash
# harden-inputs.sh DIR — writes the inputs that docs/hardening.md measures
# (issue #11: memory on huge lines, Ctrl-C on big inputs). Everything goes
# under DIR (default /tmp/harden/in); nothing in the repository is touched.
#
#   DIR/line20/…/<id>.jsonl      a Claude session whose 2nd line is one 20 MB
#                                user message (valid JSON)           -> stats
#   DIR/line300/…/<id>.jsonl     a Claude session whose 2nd line is 300 MB
#                                (over the 256 MiB line limit)       -> check
#   DIR/big/…/<id>.jsonl         one ~600 MB Claude session (internal/gen),
#                                90 days old                          -> check, revert
#   DIR/store/                   a Claude store of 20,000 small expired
#                                sessions, each with 3 rotations      -> ls, cleanup, prune-rotations
#
# Sizes can be changed with BIG=600MB and STORE=20000.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/tmp/harden/in}
BIG=${BIG:-600MB}
STORE=${STORE:-20000}
mkdir -p "$DIR"
old=$(date -d '90 days ago' +%Y%m%d%H%M)

# hugeline FILE BYTES: a Claude session of three lines, the middle one a
# user message of BYTES bytes of ordinary text
hugeline() {
	local f=$1 n=$2 sid=0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f
	mkdir -p "$(dirname "$f")"
	{
		printf '{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"start"},"uuid":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/home/u/p","sessionId":"%s"}\n' $sid
		printf '{"parentUuid":"aaaaaaaa-0000-4000-8000-000000000001","isSidechain":false,"type":"user","message":{"role":"user","content":"'
		# yes and tr end on SIGPIPE when head has its bytes
		(set +o pipefail; yes 'lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789;' | tr -d '\n' | head -c "$n")
		printf '"},"uuid":"aaaaaaaa-0000-4000-8000-000000000002","timestamp":"2026-11-01T10:00:01.000Z","sessionId":"%s"}\n' $sid
		printf '{"parentUuid":"aaaaaaaa-0000-4000-8000-000000000002","isSidechain":false,"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"output_tokens":5}},"uuid":"aaaaaaaa-0000-4000-8000-000000000003","timestamp":"2026-11-01T10:00:02.000Z","sessionId":"%s"}\n' $sid
	} >"$f"
	touch -t "$old" "$f"
}

hugeline "$DIR/line20/.claude/projects/-home-u-p/0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl" 20000000
hugeline "$DIR/line300/.claude/projects/-home-u-p/0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl" 300000000

if [ ! -d "$DIR/big" ]; then
	go run ./internal/gen claude -out "$DIR/big.tmp" -size "$BIG" -files 1 -seed 11 >/dev/null
	find "$DIR/big.tmp" -type f -exec touch -t "$old" {} +
	mv "$DIR/big.tmp" "$DIR/big"
fi

if [ ! -d "$DIR/store" ]; then
	p="$DIR/store.tmp/projects/-home-u-p"
	mkdir -p "$p"
	for ((i = 0; i < STORE; i++)); do
		id=$(printf '%08x-0000-4000-8000-%012x' $i $i)
		line='{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,"sessionId":"'$id'","isSidechain":false,"userType":"external","version":"2.1.197","message":{"role":"user","content":"hi"}}'
		echo "$line" >"$p/$id.jsonl"
		for k in 1 2 3; do echo "$line" >"$p/$id.jsonl.$k"; done
	done
	find "$DIR/store.tmp" -type f -exec touch -t "$old" {} +
	mv "$DIR/store.tmp" "$DIR/store"
fi
du -sh "$DIR"/*
