# shellcheck shell=bash
# Sourced by the comparison scripts (compare-ccusage.sh, compare-duckdb.sh, e2e-otlp.sh), which
# run over the same generated stores.
#
# generated_corpora makes, once, the generated Claude Code corpus with quirks
# ($CORPUS_SIZE in $CORPUS_FILES files) and the 50 MB Codex corpus under $CACHE, with
# internal/gen of the repository at $REPO, and sets corpus and codex to their directories.
generated_corpora() {
	corpus=$CACHE/corpus-claude-$CORPUS_SIZE-$CORPUS_FILES-quirks
	if [ ! -d "$corpus/projects" ]; then
		rm -rf "$corpus"
		(cd "$REPO" && go run ./internal/gen claude -out "$corpus" -size "$CORPUS_SIZE" -files "$CORPUS_FILES" -quirks) >&2
	fi
	codex=$CACHE/corpus-codex-50MB-60
	if [ ! -d "$codex/sessions" ]; then
		rm -rf "$codex"
		(cd "$REPO" && go run ./internal/gen codex -out "$codex" -size 50MB -files 60) >&2
	fi
}
