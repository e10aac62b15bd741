package claude

import (
	"context"
	"hash/fnv"
	"reflect"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// oneLayout is a session.LayoutCache of one file that counts its builds.
type oneLayout struct {
	b      []byte
	builds int
}

func (c *oneLayout) Layout(_, tag string, build func() ([]byte, error)) ([]byte, error) {
	if tag != layoutTag {
		panic("tag " + tag)
	}
	if c.b == nil {
		b, err := build()
		if err != nil {
			return nil, err
		}
		c.b = b
		c.builds++
	}
	return c.b, nil
}

// TestLayoutSameHistory holds History with Want through a file's layout to
// History with Want reading the file's structure: the same messages (turns,
// states, the partners that name results), for Want taking every line, no
// line, and about a third of them, on every Claude transcript of the test
// data, the samples and a generated corpus with quirks. The layout must be
// used: a file that gets none fails.
func TestLayoutSameHistory(t *testing.T) {
	ctx := context.Background()
	third := func(raw []byte) bool {
		h := fnv.New32a()
		h.Write(raw)
		return h.Sum32()%3 == 0
	}
	wants := map[string]func([]byte) bool{
		"every line": func([]byte) bool { return true },
		"no line":    func([]byte) bool { return false },
		"a third":    third,
	}
	files := jsonlFiles(t, factsDirs(t))
	compared := 0
	defer func(n int) { layoutReadBuf = n }(layoutReadBuf)
	for k, path := range files {
		lay := &oneLayout{}
		// reads smaller than the lines, and a little larger
		layoutReadBuf = []int{1 << 20, 300, 4096}[k%3]
		for name, want := range wants {
			var direct, through []session.Message
			collect := func(to *[]session.Message) func(*session.Message) error {
				return func(m *session.Message) error {
					*to = append(*to, cloneMessage(m))
					return nil
				}
			}
			if err := (Home{}).History(ctx, path, session.HistoryOptions{Want: want}, collect(&direct)); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			done, err := Home{}.historyByLayout(ctx, path, session.HistoryOptions{Want: want, Layouts: lay}, collect(&through))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if !done {
				t.Fatalf("%s: no layout was made of it", path)
			}
			if !reflect.DeepEqual(direct, through) {
				t.Errorf("%s, want %s: through the layout\n%+v\nreading the structure\n%+v", path, name, through, direct)
			}
			compared += len(direct)
		}
		if lay.builds != 1 {
			t.Fatalf("%s: layout made %d times", path, lay.builds)
		}
	}
	if len(files) < 10 || compared < 500 {
		t.Fatalf("only %d files, %d messages compared", len(files), compared)
	}
	t.Logf("%d files, %d messages compared", len(files), compared)
}

// TestLayoutDecodeRefusesDamage: a layout cut short, or with a byte
// changed, decodes as whole only when it is still a valid layout, and
// never panics.
func TestLayoutDecodeRefusesDamage(t *testing.T) {
	b, err := buildLayout(context.Background(), "../../../testdata/sessions/claude/projects/-home-alice-src-web/5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	es, ok := decodeLayout(b)
	if !ok || len(es) < 3 {
		t.Fatalf("the layout does not decode: %v, %d entries", ok, len(es))
	}
	for n := 0; n < len(b); n++ {
		if _, ok := decodeLayout(b[:n]); ok {
			t.Errorf("cut to %d of %d bytes, it still decodes", n, len(b))
		}
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x81
		if es, ok := decodeLayout(c); ok {
			for _, e := range es {
				for _, p := range e.partners {
					if int(p) >= len(es) {
						t.Fatalf("byte %d changed: a partner out of range decoded", i)
					}
				}
			}
		}
	}
}

func FuzzDecodeLayout(f *testing.F) {
	b, err := buildLayout(context.Background(), "../../../testdata/sessions/claude/projects/-home-alice-src-web/5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		es, ok := decodeLayout(b)
		if !ok {
			return
		}
		for _, e := range es {
			if e.off < 0 || e.len < 0 || e.turn < -1 {
				t.Fatalf("decoded %+v", e)
			}
			for _, p := range e.partners {
				if int(p) >= len(es) {
					t.Fatalf("partner %d of %d", p, len(es))
				}
			}
		}
	})
}
