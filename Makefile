# sessctl — see README.md. `make test` is what CI runs.
GO       ?= go
BIN      ?= bin/sessctl
PREFIX   ?= $(HOME)/.local
FUZZTIME ?= 30s
COMMIT   := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
LDFLAGS  := -s -w -X main.buildCommit=$(COMMIT)
# urfave/cli's markdown and man page output is not used; leaving it out
# drops blackfriday and its start-up cost (about 1.5 ms a run)
TAGS     ?= urfave_cli_no_docs
# the binary is built without cgo: only net and os/user (through the OTLP
# exporter) would use it, and a binary linked to libc starts through the
# dynamic loader and cgo's set-up, about 2.5 ms and 1.6 MB more a run.
# (Only for the binary: the race detector of make test needs cgo.)
BUILDENV := CGO_ENABLED=0

.PHONY: all build install man test test-heavy lint fmt-check vet vet-other-os staticcheck unit bench fuzz fuzz-brief e2e e2e-latest compare-ccusage compare-tiktoken compare-duckdb e2e-otlp clean

all: build

build:
	$(BUILDENV) $(GO) build -trimpath -buildvcs=auto -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sessctl

MANDIR   ?= $(PREFIX)/share/man/man1
FISHDIR  ?= $(PREFIX)/share/fish/vendor_completions.d

# the binary, its man page and its fish completion. Both texts are written
# by urfave/cli from the command definitions: the fish script by the
# installed binary itself, the man page by `go run` of a build without
# urfave_cli_no_docs (the hidden gen-man command, cmd/sessctl/gen_man.go),
# so that the installed binary stays without the docs code
install:
	mkdir -p $(PREFIX)/bin $(MANDIR) $(FISHDIR)
	$(BUILDENV) $(GO) build -trimpath -buildvcs=auto -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(PREFIX)/bin/sessctl ./cmd/sessctl
	$(GO) run -trimpath ./cmd/sessctl gen-man > $(MANDIR)/sessctl.1.tmp && mv $(MANDIR)/sessctl.1.tmp $(MANDIR)/sessctl.1
	$(PREFIX)/bin/sessctl completion fish > $(FISHDIR)/sessctl.fish.tmp && mv $(FISHDIR)/sessctl.fish.tmp $(FISHDIR)/sessctl.fish

# the man page alone, beside the binary (bin/sessctl.1)
man:
	mkdir -p $(dir $(BIN))
	$(GO) run -trimpath ./cmd/sessctl gen-man > $(BIN).1

# test = lint + the whole unit and CLI suite under the race detector
test: lint unit

# the tests that move hundreds of MB or decode the whole test corpus twice
# under -race, or take 10 s or more under it (build tag heavy:
# cmd/sessctl/{bigline,memory,revert_reads,sigint,spill}_test.go,
# pkg/session/{decode_diff,parallel}_heavy_test.go, pkg/stats/bigline_heavy_test.go,
# pkg/usage/calendar_heavy_test.go, pkg/tokens/corpus_heavy_test.go), kept out of `make test` so that
# it stays under ten minutes on 2 cores with cold caches; .ci/run runs
# them, and fuzz-brief, right after it. A new heavy test goes in a file
# with the tag and in this list.
HEAVY_TESTS := TestCheckOneHundredMiBLine|TestPeakMemoryOnHugeLines|TestPeakMemoryOnABigKimiCodeWire|TestRevertReadsTheFileTwice|TestDecodeMatchesEncodingJSON|TestSIGINTStopsEveryCommand|TestSpillSameOutput|TestParallelReadMatchesSerial|TestHugeLineAllocations|TestParseMillisCalendar|TestMatchesReferenceCorpus
HEAVY_PKGS  := ./cmd/sessctl/ ./pkg/session/ ./pkg/stats/ ./pkg/usage/ ./pkg/tokens/
test-heavy:
	$(GO) vet -tags heavy $(HEAVY_PKGS)
	@log=$$(mktemp); \
	$(GO) test -race -count=1 -tags heavy -run '^($(HEAVY_TESTS))$$' -v $(HEAVY_PKGS) >$$log 2>&1; rc=$$?; \
	grep -E '^(--- |ok|FAIL|panic)' $$log; \
	if [ $$rc -ne 0 ]; then cat $$log; rm -f $$log; exit $$rc; fi; \
	n=$$(grep -c -- '^--- PASS' $$log); rm -f $$log; \
	if [ $$n -ne 11 ]; then echo "test-heavy: $$n of 11 tests passed (skipped ones count as not passed)"; exit 1; fi

lint: fmt-check vet staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# sessctl builds for macOS (most Claude Code users) and the BSDs too; this
# catches a Linux-only constant or field (it once did: UTIME_OMIT,
# Stat_t.Atim, TIOCSPTLCK). About 3 minutes with cold caches, so in .ci/run
# after make test rather than in it.
vet-other-os:
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=freebsd GOARCH=amd64 $(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

unit:
	$(GO) test -race -count=1 ./...

# benchmarks: Go benchmarks for the reader and ls, plus the bench scripts of
# the tokenizer, stats and the peak memory on a large store when present
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./pkg/jsonl/ ./cmd/sessctl/ ./pkg/cleanup/ 2>/dev/null | grep -E '^(Benchmark|ok|PASS)' || true
	@for s in scripts/bench-tokens.sh scripts/bench-stats.sh scripts/bench-memory.sh; do \
		if [ -x $$s ]; then echo "== $$s"; $$s || exit 1; fi; \
	done

# the fast decoders against the full ones, briefly (.ci/run, after make test)
fuzz-brief:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeDifferential$$' -fuzztime 10s ./pkg/session/

# every fuzz target, FUZZTIME each (make fuzz FUZZTIME=5m)
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

# real Claude Code and Codex binaries against the fake model server
e2e:
	scripts/e2e.sh

# the same suite with the newest Claude Code and Codex on npm: reports drift (CI does not run it)
e2e-latest:
	scripts/e2e-latest.sh

# ccusage and sessctl must agree on recorded usage
compare-ccusage:
	scripts/compare-ccusage.sh

# export --usage --otlp against the OpenTelemetry Collector's OTLP receiver (module e2e/otlp)
e2e-otlp:
	scripts/e2e-otlp.sh

# DuckDB (npm @duckdb/node-api) reads export --usage; its sums must equal stats --all
compare-duckdb:
	scripts/compare-duckdb.sh

# our tokenizer and OpenAI's tiktoken (npm, WASM) must give identical ids
compare-tiktoken:
	scripts/compare-tiktoken.sh

clean:
	rm -rf bin
