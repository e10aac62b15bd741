package claude

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// factsDirs are the Claude transcripts the structure scanner is held to the
// full decoder on: the repository's own (hand-written, the oracle cases,
// the real clients' e2e fixtures), the shared samples when present, and a
// corpus internal/gen makes (with its quirks).
func factsDirs(t *testing.T) []string {
	dirs := []string{"testdata", "../../../testdata/sessions/claude", "../../../testdata/claude-2.1.330"}
	for _, d := range []string{"../../../../shared/samples/claude", "../../../../shared/samples/real-clients/claude-home"} {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		} else {
			t.Logf("%s not available: skipped", d)
		}
	}
	if testing.Short() {
		return dirs
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Logf("no go command to run internal/gen: the generated corpus is skipped (%v)", err)
		return dirs
	}
	out := filepath.Join(t.TempDir(), "gen")
	cmd := exec.Command(gobin, "run", "../../../internal/gen", "claude", "-out", out, "-size", "8MB", "-files", "6", "-quirks")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("internal/gen: %v\n%s", err, b)
	}
	return append(dirs, out)
}

func jsonlFiles(t *testing.T, dirs []string) []string {
	var files []string
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if extra := os.Getenv("SESSCTL_FACTS_FILE"); extra != "" {
		files = append(files, extra) // a big file to try by hand
	}
	return files
}

// scanFacts reads the facts of one valid line (no raw control
// characters) with a lexer that does not validate, as the structure pass
// did before it validated as it read.
func scanFacts(raw []byte, f *facts) bool {
	s := scanner{l: usage.NewLexer(raw), ok: true}
	return s.facts(f)
}

// decodeFacts is decodeFactsLazy of a line a validating Reader gave, with
// a lexer that does not validate: held to the full decoder too.
func decodeFacts(l *jsonl.Line, f *facts) {
	if l.Status == jsonl.OK && !l.RawControl {
		s := scanner{l: usage.NewLexer(l.Raw), ok: true}
		if s.facts(f) {
			s.finish(l, f)
			return
		}
	}
	decodedFacts(l, f)
}

// TestFactsMatchDecode: line by line, what the index reads of a line is the
// same whether the structure scanner or the full decoder read it; and the
// turns of every file (cuts, states, previews) are the same from either.
func TestFactsMatchDecode(t *testing.T) {
	files := jsonlFiles(t, factsDirs(t))
	if len(files) < 20 {
		t.Fatalf("only %d transcripts found", len(files))
	}
	var lines, fast int
	for _, p := range files {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rd := jsonl.NewReader(fh)
		for {
			l, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			lines++
			var got, want, scanned facts
			decodeFacts(l, &got)
			r := session.Decode(Home{}, l)
			factsOf(&r, &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:%d: structure scan\n%+v\nfull decode\n%+v", p, l.Num, got, want)
			}
			if l.Raw != nil {
				text := string(l.Raw)
				if l.EOL != jsonl.NoEOL {
					text += "\n"
				}
				checkLazy(t, text, l, want)
			}
			if l.Status == jsonl.OK && !l.RawControl && scanFacts(l.Raw, &scanned) {
				fast++
			}
		}
		fh.Close()
		got, err := Home{}.Turns(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fullTurns(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: turns from the structure scan\n%+v\nfrom the full decode\n%+v", p, got, want)
		}
	}
	t.Logf("%d files, %d lines, %d read by the structure scanner", len(files), lines, fast)
	if fast < lines/2 {
		t.Errorf("the structure scanner read only %d of %d lines: it is not what the index runs on", fast, lines)
	}
}

// fullTurns is Turns with every line decoded in full.
func fullTurns(path string) ([]session.Turn, error) {
	b := newIndexBuilder()
	err := session.ReadFile(path, Home{}, func(r *session.Record) error {
		var f facts
		factsOf(r, &f)
		b.add(&r.Line, &f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.ix.turns(b.ix.walk()).turns, nil
}

// scanCases are lines whose shape the full decoder reads its own way, or
// whose words matter: the scanner must leave them to it, or read them the
// same. They seed FuzzFacts.
var scanCases = []string{
	`{"type":"assistant","uuid":"a","parentUuid":"p","message":{"id":"m","model":"x","content":[{"type":"text","text":""},{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":""},{"type":"text","text":""}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"thinking","thinking":"hm"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"t"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"thinking","thinking":""},{"type":"thinking","thinking":""}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"thinking"},{"type":"server_tool_use","id":"s"},{"type":"text","text":"x"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":"plain"}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":""}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}}`,
	`{"type":"assistant","uuid":"a","isApiErrorMessage":true,"message":{"content":[{"type":"text","text":"x"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"tool_use","id":"t\u0031"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"ID":"m","content":[]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","id":"n","content":[]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":5,"content":[]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[null]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":null}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"Type":"tool_use","id":"t"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"tool_use","id":"t","is_error":"no"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[],"usage":{"input_tokens":"7","cache_creation":5}}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[],"usage":{"Cache_Creation":[]}}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[],"usage":{"cache_creation":{"ephemeral_1h_input_tokens":"x"}}}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":{"type":"text"}}}`,
	`{"type":"assistant","uuid":"a","message":"text"}`,
	`{"type":"assistant","uuid":"a"}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out"}]}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"text","text":"Continue from where you left off."}]}}`,
	`{"type":"user","uuid":"u","isCompactSummary":true,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"user","uuid":"u","isMeta":true,"message":{"role":"user","content":"Continue from where you left off."}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p1"}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":null}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":5}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"PromptId":"p1"}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p1","promptId":"p2"}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p\u0031"}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p1","leafUuid":"x"}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p1","explicit":"yes"}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p1","compactMetadata":{"preservedMessages":{"uuids":[1]}}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p1","x":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"fix it"},"promptId":"p1","x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"type":"user","uuid":"u","isSidechain":true,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	// prompts of one string, which the scanner reads
	`{"type":"user","uuid":"u","timestamp":"2026-11-01T00:00:00.000Z","message":{"role":"user","content":"  fix\nit  "}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"tab\there \"quoted\" \\ slash\/ \b\f\r"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"\u0041bc"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"a\\u0041"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"\ud800 lone"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"<system-reminder>x</system-reminder>"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":" \n <command-name>/clear</command-name>"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"   "}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":""}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"Continue from where you left off."}}`,
	`{"type":"user","message":{"role":"user","content":"no uuid"}}`,
	`{"type":"user","uuid":"u","isSidechain":true,"message":{"role":"user","content":"side"}}`,
	`{"type":"user","uuid":"u","isMeta":false,"message":{"role":"user","content":"not meta"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"é ` + strings.Repeat("long ", 100) + `"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"p"},"promptId":"p1","timestamp":"2026-11-01T00:00:00Z"}`,
	`{"type":"user","uuid":"u","message":{"content":"no role"}}`,
	`{"type":"user","uuid":"u","message":{"role":"assistant","content":"odd role"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":"twice","content":"again"}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]},"cwd":7}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]},"isMeta":null}`,
	`{"type":"user","UUID":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"user","uuid":"u","uuid":"v","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"user","uu\u0069d":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"progress","uuid":"g","parentUuid":"a","data":{"message":{"type":"assistant"}}}`,
	`{"type":"progress","uuid":"g","parentUuid":null}`,
	`{"type":"progress","uuid":"g","parentUuid":7}`,
	`{"type":"system","subtype":"compact_boundary","uuid":"b","compactMetadata":{"preTokens":1,"preservedSegment":{"headUuid":"h","anchorUuid":"a","tailUuid":"t"}}}`,
	`{"type":"system","subtype":"compact_boundary","uuid":"b","compactMetadata":"x"}`,
	`{"type":"system","subtype":"x","uuid":"b","content":{"a":[1,2]}}`,
	`{"type":"last-prompt","leafUuid":"a","explicit":true}`,
	`{"type":"last-prompt","leafUuid":null,"explicit":true}`,
	`{"type":"queue-operation","operation":"enqueue","content":"x"}`,
	`{"type":"cost-state","modelUsage":{"m":{"inputTokens":1}}}`,
	`{"type":"custom-title","customTitle":"t"}`,
	`{"type":"custom-title","customTitle":null}`,
	`{"type":"","uuid":"a"}`,
	`{"uuid":"a","message":{"role":"assistant","usage":{"input_tokens":1}}}`,
	`{"type":"t\u0079pe"}`,
	// nesting the validator takes and the decoders refuse (encoding/json's limit)
	`{"type":"progress","uuid":"g","x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"type":"file-history-snapshot","snapshot":{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}`,
	`{"type":"user","uuid":"u","timestamp":"2026-11-01T00:00:00.000Z","version":"2.1.330","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"user","uuid":"u","timestamp":5,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"user","uuid":"u","ﬆype":"x","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":"x"}]},"params":5,"content":[1]}`,
}

// lazyCases are lines that the strict lexer of decodeFactsLazy must judge
// as the validator does: what is wrong with them (or right, but unusual)
// is in a part the scanner skips, reads, or walks.
var lazyCases = []string{
	`{"type":"progress","uuid":"g","data":{"s":"` + "\xff" + `"}}`,
	`{"type":"progress","uuid":"g","data":{"s":"` + "\x00" + `"}}`,
	`{"type":"progress","uuid":"g","data":{"s":"a\u0000b"}}`,
	`{"type":"progress","uuid":"g","data":{"s":"tab\there"}}`,
	`{"type":"progress","uuid":"g","data":{"s":"\q"}}`,
	`{"type":"progress","uuid":"g","data":{"s":"\x41"}}`,
	`{"type":"progress","uuid":"g","data":{"s":"\u12G4"}}`,
	`{"type":"progress","uuid":"g","data":[01]}`,
	`{"type":"progress","uuid":"g","data":[1.]}`,
	`{"type":"progress","uuid":"g","data":[-]}`,
	`{"type":"progress","uuid":"g","data":[1e]}`,
	`{"type":"progress","uuid":"g","data":[-0.5e+7]}`,
	`{"type":"progress","uuid":"g","data":[tru]}`,
	`{"type":"progress","uuid":"g","data":[true,]}`,
	`{"type":"progress","uuid":"g","data":{"a":1,}}`,
	`{"type":"progress","uuid":"g","data":{"a" 1}}`,
	`{"type":"progress","uuid":"g","data":{"a":1}}}`,
	`{"type":"progress","uuid":"g"} x`,
	`{"type":"progress","uuid":"g"}  `,
	`  {"type":"progress","uuid":"g"}`,
	`{"type":"progress","uuid":"g",}`,
	`{"type":"progress","uuid":"g` + "\xff" + `"}`,
	`{"type":"progress","uuid":"g` + "\x01" + `"}`,
	`{"type":"progress","uu` + "\xff" + `id":"g"}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"c":"` + "\xc3" + `"}}]}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":01}}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":-}}}`,
	`{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":1.5e3}}}`,
	`{"type":"assistant","uuid":"a","isSidechain":tru,"message":{"id":"m","content":[]}}`,
	`{"type":"assistant","uuid":"a","isSidechain":nul,"message":{"id":"m","content":[]}}`,
	`{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"` + "\xed\xa0\x80" + `"}]}}`,
	`[{"type":"progress"}]`,
	`"progress"`,
	`{}`,
	`{"type":"progress","uuid":"g","x":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}`,
	`{"type":"progress","uuid":"g","x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	// valid counted from the skipped value, too deep counted from the line
	`{"type":"progress","uuid":"g","x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

func TestScanCases(t *testing.T) {
	for _, c := range append(scanCases, lazyCases...) {
		checkFacts(t, c)
	}
}

func checkFacts(t *testing.T, line string) {
	t.Helper()
	l, err := jsonl.NewReader(strings.NewReader(line + "\n")).Next()
	if err != nil {
		t.Fatal(err)
	}
	var got, want facts
	decodeFacts(l, &got)
	r := session.Decode(Home{}, l)
	factsOf(&r, &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s\nstructure scan %+v\nfull decode    %+v", line, got, want)
	}
	checkLazy(t, line+"\n", l, want)
	if line != "" { // nothing at all is no line
		checkLazy(t, line, l, want)
	}
}

// checkLazy holds decodeFactsLazy, on the one line of text as a Reader
// that skips validation gives it, to the validated line valid and the
// facts the full decoder makes of it (want).
func checkLazy(t *testing.T, text string, valid *jsonl.Line, want facts) {
	t.Helper()
	rd := jsonl.NewReader(strings.NewReader(text))
	rd.SkipValidation = true
	l, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if l.EOL == jsonl.NoEOL { // not terminated: its own status, and facts
		v, err := jsonl.NewReader(strings.NewReader(text)).Next()
		if err != nil {
			t.Fatal(err)
		}
		r := session.Decode(Home{}, v)
		valid, want = v, facts{}
		factsOf(&r, &want)
	}
	var got facts
	decodeFactsLazy(l, &got)
	if l.Status != valid.Status || l.RawControl != valid.RawControl {
		t.Fatalf("%q: decodeFactsLazy left the line %v (raw control %v); validated it is %v (%v)",
			text, l.Status, l.RawControl, valid.Status, valid.RawControl)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q\nlazy structure scan %+v\nfull decode         %+v", text, got, want)
	}
}

// FuzzFacts holds the structure scanner to the full decoder on any line.
func FuzzFacts(f *testing.F) {
	for _, c := range append(scanCases, lazyCases...) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") {
			return
		}
		checkFacts(t, line)
	})
}

// FuzzUnescapeShort holds unescapeShort to encoding/json on the body of
// any valid JSON string: where it decodes one, it decodes it the same.
func FuzzUnescapeShort(f *testing.F) {
	for _, c := range []string{`plain`, `a\nb`, `\"q\" \\ \/ \b\f\r\t`, `\u0041`, `x\\u0041`, `é\n`, `\`} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var want string
		if json.Unmarshal([]byte(`"`+body+`"`), &want) != nil || !utf8.ValidString(body) {
			return
		}
		got, ok := unescapeShort([]byte(body))
		if ok && got != want {
			t.Fatalf("unescapeShort(%q) = %q, encoding/json %q", body, got, want)
		}
		if !ok && !strings.Contains(body, `\u`) {
			t.Fatalf("unescapeShort(%q) refused a string without \\u", body)
		}
	})
}
