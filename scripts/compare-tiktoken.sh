#!/usr/bin/env bash
# compare-tiktoken.sh — check that sessctl's token counter gives exactly the
# tokens of OpenAI's tiktoken (the npm package, pinned in
# scripts/tiktoken-npm/package-lock.json) on a generated mixed corpus, for
# cl100k_base and o200k_base. Exits 1 on any difference.
#
# Environment: SIZE (corpus bytes, default 4000000), SEED (default 1),
# SESSCTL_TIKTOKEN_NPM (npm cache dir, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/tiktoken-npm).
set -euo pipefail
source "$(dirname "$0")/tiktoken-npm/lib.sh"

size=${SIZE:-4000000}
seed=${SEED:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

install_tiktoken
build_tools "$tmp"
"$tmp/corpusgen" -size "$size" -seed "$seed" >"$tmp/corpus.jsonl"
docs=$(wc -l <"$tmp/corpus.jsonl")
say "corpus: $docs documents, $(wc -c <"$tmp/corpus.jsonl") bytes of JSON (seed $seed)"

status=0
for enc in cl100k_base o200k_base; do
	npm_tiktoken ids "$enc" <"$tmp/corpus.jsonl" >"$tmp/npm.$enc"
	"$tmp/tokcount" -enc "$enc" ids <"$tmp/corpus.jsonl" >"$tmp/go.$enc"
	if cmp -s "$tmp/npm.$enc" "$tmp/go.$enc"; then
		tokens=$(awk '{n += $1} END {print n}' "$tmp/go.$enc")
		say "$enc: identical ($docs documents, $tokens tokens)"
		continue
	fi
	status=1
	ndiff=$(paste -d '\t' "$tmp/npm.$enc" "$tmp/go.$enc" | awk -F '\t' '$1 != $2' | wc -l)
	say "$enc: $ndiff of $docs documents differ; the first ones:"
	paste -d '\t' "$tmp/npm.$enc" "$tmp/go.$enc" | awk -F '\t' '$1 != $2 {print NR; if (++n == 3) exit}' |
		while read -r line; do
			printf 'document %d: %s\n' "$line" "$(sed -n "${line}p" "$tmp/corpus.jsonl" | cut -c1-300)"
			printf '  npm tiktoken: %s\n' "$(sed -n "${line}p" "$tmp/npm.$enc" | cut -c1-300)"
			printf '  sessctl:      %s\n' "$(sed -n "${line}p" "$tmp/go.$enc" | cut -c1-300)"
		done >&2
done
exit $status
