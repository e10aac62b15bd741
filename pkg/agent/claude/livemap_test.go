package claude

import (
	"context"
	"hash/fnv"
	"reflect"
	"testing"

	"github.com/sessctl/sessctl/internal/livemaptest"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestLiveMapSameHistory holds History with Want through a file's live map to
// History with Want reading the file's structure: the same messages (turns,
// states, the partners that name results), for Want taking every line, no
// line, and about a third of them, on every Claude transcript of the test
// data, the samples and a generated corpus with quirks. The live map must be
// used: a file that gets none fails.
func TestLiveMapSameHistory(t *testing.T) {
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
	defer func(n int) { session.LiveMapReadBuf = n }(session.LiveMapReadBuf)
	for k, path := range files {
		b, _, err := buildLiveMap(ctx, path, nil)
		if err != nil || b == nil {
			t.Fatalf("%s: no live map: %v", path, err)
		}
		kept := &livemaptest.Memory{}
		kept.Keep(path, liveMapTag, b)
		// reads smaller than the lines, and a little larger
		session.LiveMapReadBuf = []int{1 << 20, 300, 4096}[k%3]
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
			// made by this search (Want asked on the way), and kept
			for _, lay := range []*livemaptest.Memory{{}, kept} {
				through = through[:0]
				done, err := Home{}.historyByLiveMap(ctx, path, session.HistoryOptions{Want: want, LiveMaps: lay}, collect(&through))
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if !done {
					t.Fatalf("%s: no live map was made of it", path)
				}
				if !reflect.DeepEqual(direct, through) {
					t.Errorf("%s, want %s, map made now: %v: through the live map\n%+v\nreading the structure\n%+v", path, name, lay != kept, through, direct)
				}
				if made := lay != kept; lay.Builds != map[bool]int{true: 1}[made] {
					t.Fatalf("%s: live map made %d times", path, lay.Builds)
				}
			}
			compared += len(direct)
		}
	}
	if len(files) < 10 || compared < 500 {
		t.Fatalf("only %d files, %d messages compared", len(files), compared)
	}
	t.Logf("%d files, %d messages compared", len(files), compared)
}
