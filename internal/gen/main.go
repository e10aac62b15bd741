// Command gen writes deterministic synthetic session corpora for tests,
// comparisons and benchmarks:
//
//	go run ./internal/gen claude -out DIR -size 200MB -files 150 [-seed N] [-quirks]
//	go run ./internal/gen codex  -out DIR -size 50MB  -files 60  [-seed N]
//	go run ./internal/gen kimicode -out DIR -size 300MB -files 1 [-seed N]
//
// The same flags always give the same bytes. claude writes a Claude Code
// config dir (DIR/projects/<project>/<session>.jsonl, subagent files under
// <session>/subagents/); codex writes a Codex home (DIR/sessions/YYYY/MM/DD/
// rollout-….jsonl); kimicode a Kimi Code home (DIR/sessions/wd_…/session_…/
// agents/main/wire.jsonl). Each subcommand lives in its own file.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "gen: error: %v\n", err)
		os.Exit(2)
	}
}

// generators maps a subcommand to its function.
var generators = map[string]func(opt options, stdout io.Writer) error{
	"claude":   genClaude,
	"codex":    genCodex,
	"kimicode": genKimiCode,
}

type options struct {
	out    string
	size   int64
	files  int
	seed   uint64
	quirks bool
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || generators[args[0]] == nil {
		var names []string
		for n := range generators {
			names = append(names, n)
		}
		return fmt.Errorf("usage: gen {%s} -out DIR [-size 200MB] [-files N] [-seed N]", strings.Join(sortStrings(names), "|"))
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output directory (created)")
	size := fs.String("size", "20MB", "approximate total size (e.g. 200MB, 1GB, 500KB)")
	files := fs.Int("files", 20, "number of session files")
	seed := fs.Uint64("seed", 1, "random seed")
	quirks := fs.Bool("quirks", false, "add lines ccusage drops silently (spaced JSON, null fields) and corrupt lines")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-out DIR is required")
	}
	n, err := parseSize(*size)
	if err != nil {
		return err
	}
	if *files < 1 {
		return fmt.Errorf("-files must be at least 1")
	}
	return generators[args[0]](options{out: *out, size: n, files: *files, seed: *seed, quirks: *quirks}, stdout)
}

func parseSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, suf.s) {
			u, mult = strings.TrimSuffix(u, suf.s), suf.m
			break
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("invalid -size %q (use e.g. 200MB)", s)
	}
	return int64(f * float64(mult)), nil
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// rng is the one source of randomness; everything derives from the seed.
type rng struct{ *rand.Rand }

func newRNG(seed uint64, stream uint64) rng {
	return rng{rand.New(rand.NewPCG(seed, stream))}
}

func (r rng) uuid() string {
	const hex = "0123456789abcdef"
	b := make([]byte, 36)
	for i := range b {
		switch i {
		case 8, 13, 18, 23:
			b[i] = '-'
		case 14:
			b[i] = '4'
		default:
			b[i] = hex[r.IntN(16)]
		}
	}
	return string(b)
}

func (r rng) hexID(n int) string {
	const hex = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hex[r.IntN(16)]
	}
	return string(b)
}

var words = strings.Fields(`the a function file test error return value string config build server
request response handler parse token context session model cache tool result output input write read
update delete create list check fix bug line path module package import struct field method type
interface loop index array map slice channel buffer stream reader writer json yaml line byte offset
compile run deploy merge branch commit rebase diff patch review 日本語 テスト 中文 测试 émoji ✓ 👍`)

// text returns about n bytes of words, with newlines, quotes and escapes
// that JSON must encode.
func (r rng) text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		w := words[r.IntN(len(words))]
		b.WriteString(w)
		switch r.IntN(24) {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString(` "quoted" `)
		case 2:
			b.WriteString("\t")
		case 3:
			b.WriteString(`\path\`)
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// jstr encodes s as a JSON string the way JSON.stringify and serde_json do
// (raw UTF-8; control characters escaped).
func jstr(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteRune(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// lineFile is a session file being written line by line.
type lineFile struct {
	f *os.File
	w *bufio.Writer
	n int64 // bytes written
}

// createLines creates the file at path, and its directory.
func createLines(path string) (*lineFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &lineFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// put writes one line.
func (lf *lineFile) put(l string) {
	lf.w.WriteString(l)
	lf.w.WriteByte('\n')
	lf.n += int64(len(l) + 1)
}

// close writes what is buffered and closes the file.
func (lf *lineFile) close() error {
	if err := lf.w.Flush(); err != nil {
		lf.f.Close()
		return err
	}
	return lf.f.Close()
}
