package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/usage"
)

// benchCorpus is the generated Codex corpus of the comparison scripts
// (scripts/lib/corpora.sh), when it is there: SESSCTL_BENCH_CODEX or
// ~/.cache/sessctl/corpus-codex-50MB-60.
func benchCorpus(b *testing.B) [][]byte {
	dir := os.Getenv("SESSCTL_BENCH_CODEX")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "sessctl", "corpus-codex-50MB-60")
	}
	var files [][]byte
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && filepath.Ext(p) == ".jsonl" {
			if data, err := os.ReadFile(p); err == nil {
				files = append(files, data)
			}
		}
		return nil
	})
	if len(files) == 0 {
		b.Skip("no Codex corpus at " + dir + " (make it with scripts/compare-ccusage.sh)")
	}
	return files
}

// BenchmarkScanUsage is ScanUsage over the corpus held in memory: the
// scanner's own cost, without the reads.
func BenchmarkScanUsage(b *testing.B) {
	files := benchCorpus(b)
	var n int64
	for _, f := range files {
		n += int64(len(f))
	}
	b.SetBytes(n)
	var rd usage.Reader
	for b.Loop() {
		for _, f := range files {
			if _, err := rd.Read(context.Background(), bytes.NewReader(f), "x", Home{}, usage.Carries|usage.CCUsage|usage.Gauge); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkUsageKinds is usageKinds over every line of the corpus.
func BenchmarkUsageKinds(b *testing.B) {
	files := benchCorpus(b)
	var lines [][]byte
	var n int64
	for _, f := range files {
		for _, l := range bytes.Split(f, []byte("\n")) {
			lines = append(lines, l)
			n += int64(len(l)) + 1
		}
	}
	b.SetBytes(n)
	for b.Loop() {
		for _, l := range lines {
			usageKinds(l)
		}
	}
}

// BenchmarkTokenCountFast is the fast path over the corpus's token_count
// lines, and BenchmarkTokenCountEvent the full decoder over the same. The
// lines are the first 1,000 of the corpus, copied side by side: in a scan
// a line is read just after the kernel copied it into the reader's buffer,
// so it is in the processor's cache, and so are these.
func BenchmarkTokenCountFast(b *testing.B)  { benchTokenCount(b, tokenCountFast) }
func BenchmarkTokenCountEvent(b *testing.B) { benchTokenCount(b, codexEvent) }

func benchTokenCount(b *testing.B, read func([]byte, *codexEv) bool) {
	var buf []byte
	var at []int
	for _, f := range benchCorpus(b) {
		for _, l := range bytes.Split(f, []byte("\n")) {
			if bytes.Contains(l, []byte(`"token_count"`)) && len(at) < 2000 {
				at = append(at, len(buf), len(buf)+len(l))
				buf = append(buf, l...)
				buf = append(buf, '\n')
			}
		}
	}
	lines := make([][]byte, 0, len(at)/2)
	for k := 0; k < len(at); k += 2 {
		lines = append(lines, buf[at[k]:at[k+1]])
	}
	b.SetBytes(int64(len(buf)))
	var ev codexEv
	for b.Loop() {
		for _, l := range lines {
			read(l, &ev)
		}
	}
}
