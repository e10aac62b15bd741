package usage

import (
	"reflect"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

func sampleFileUsage() *FileUsage {
	fu := &FileUsage{Path: "/x/a.jsonl", Class: Carries | Gauge, Lines: 9, UsageLines: 4, Corrupt: 2,
		CCUsageOnly: 1, PerResponse: 3, PerResponseView: 700, CumulativeView: -5, Context: 1234,
		ContextSource: "last_token_usage", Window: 200000, CWD: "/home/u/p"}
	fu.Add(Request{Usage: session.Usage{Input: 1, Output: 2, CacheRead: 3, CacheCreation: 4, Reasoning: 5, CacheCreation1h: 6},
		Model: fu.ModelID("claude-x"), Time: 1700000000123, Line: 3, Key: 77, MsgKey: 78, Sidechain: true,
		CostUSD: 0.25, HasCost: true, Counted: true, CCUsage: true}, []byte(`{"a":1}`))
	fu.Add(Request{Usage: session.Usage{Input: 10}, Model: fu.ModelID("gpt-y"), Line: 5, Speed: true, Counted: true}, []byte(`{"b":1}`))
	fu.Add(Request{Usage: session.Usage{Output: 1 << 40}, Time: -1, Line: 1 << 30, CCUsage: true}, nil)
	fu.Reject(6, "usage: negative")
	fu.CountedNotByCCUsage(7, "spaced JSON")
	return fu
}

func TestEncodingRoundTrip(t *testing.T) {
	for _, fu := range []*FileUsage{sampleFileUsage(), {Context: -1}} {
		b, err := fu.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got FileUsage
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		got.Path, got.Class, got.lines = fu.Path, fu.Class, fu.lines
		if len(fu.Requests) == 0 {
			got.Requests = fu.Requests // nil and empty are the same list
		}
		if fu.models.Len() == 0 {
			got.models = fu.models
		}
		if !reflect.DeepEqual(&got, fu) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, *fu)
		}
		// every prefix is refused, never misread
		for n := 0; n < len(b); n++ {
			var cut FileUsage
			if cut.UnmarshalBinary(b[:n]) == nil {
				t.Fatalf("a prefix of %d of %d bytes was accepted", n, len(b))
			}
		}
		if (&FileUsage{}).UnmarshalBinary(append(b, 0)) == nil {
			t.Error("trailing bytes were accepted")
		}
	}
}

// TestEncodingCoversFields fails when a field is added to what the encoding
// carries, so that the cache (pkg/index) cannot silently drop it: add the
// field to MarshalBinary and UnmarshalBinary, then the count here. (One
// field of FileUsage is not data and not encoded: stream, a read's hook.)
func TestEncodingCoversFields(t *testing.T) {
	for _, c := range []struct {
		v any
		n int
	}{{FileUsage{}, 22}, {Request{}, 14}, {session.Usage{}, 6}} {
		if got := reflect.TypeOf(c.v).NumField(); got != c.n {
			t.Errorf("%T has %d fields, the encoding knows %d: update encode.go", c.v, got, c.n)
		}
	}
}

// TestDecodeReusesAndClears decodes into a reused request list that held
// other requests: nothing of them may remain.
func TestDecodeReusesAndClears(t *testing.T) {
	fu := sampleFileUsage()
	b, _ := fu.MarshalBinary()
	var rd Reader
	old := make([]Request, 5, 10)
	for i := range old {
		old[i] = Request{Key: 99, MsgKey: 98, line: 97, CostUSD: 9, File: 3}
	}
	rd.Reuse(old)
	got, err := rd.Decode(b, "/y", Carries)
	if err != nil {
		t.Fatal(err)
	}
	if &got.Requests[0] != &old[0] {
		t.Error("the list given to Reuse was not used")
	}
	want := sampleFileUsage()
	for i := range want.Requests {
		if got.Requests[i] != want.Requests[i] {
			t.Errorf("request %d: %+v, want %+v", i, got.Requests[i], want.Requests[i])
		}
	}
	if got.Path != "/y" || got.Class != Carries {
		t.Error("path or class not set")
	}
}
