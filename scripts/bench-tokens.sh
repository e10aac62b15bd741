#!/usr/bin/env bash
# bench-tokens.sh — throughput of token counting on the same generated corpus
# (~20 MB, mixed prose, code, diffs, JSON, CJK, emoji, white space) for
# cl100k_base and o200k_base: sessctl's counter on one core and on all cores,
# pkoukk/tiktoken-go on one core, and OpenAI's npm tiktoken (WASM, one core).
# MB = 10^6 bytes of UTF-8 text; rank-table loading is not timed.
#
# Environment: SIZE (corpus bytes, default 20000000), SEED (default 1),
# SESSCTL_TIKTOKEN_NPM (npm cache dir, as in compare-tiktoken.sh).
set -euo pipefail
source "$(dirname "$0")/tiktoken-npm/lib.sh"

size=${SIZE:-20000000}
seed=${SEED:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

install_tiktoken
build_tools "$tmp"
"$tmp/corpusgen" -size "$size" -seed "$seed" >"$tmp/corpus.jsonl"
say "corpus: $(wc -l <"$tmp/corpus.jsonl") documents, $size+ bytes of text (seed $seed); $(nproc) CPUs"

for enc in cl100k_base o200k_base; do
	"$tmp/tokcount" -enc "$enc" bench <"$tmp/corpus.jsonl"
	npm_tiktoken bench "$enc" <"$tmp/corpus.jsonl"
done
