package session

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// sampleLiveMap is a live map with every field set, and the file it maps.
func sampleLiveMap(t testing.TB) (string, []LiveMapEntry) {
	lines := []string{`{"a":"call one"}`, `{"b":"result one"}`, `{"c":"needle"}`, `{"d":"many in one: needle"}`, `{"e":"result two"}`}
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var es []LiveMapEntry
	off := int64(0)
	for i, l := range lines {
		e := LiveMapEntry{Line: i + 1, Off: off, Len: int64(len(l)), Sub: -1, Turn: i / 2}
		es = append(es, e)
		if i == 3 { // a second message of the same line
			e.Sub = 1
			es = append(es, e)
		}
		off += int64(len(l)) + 1
	}
	es[0].Marks, es[0].Always = []int32{2}, true
	return path, es
}

// TestLiveMapPartnersAndWanted: partners are the other holders of the ids
// an entry answers; wanted is what want takes, their partners and Always.
func TestLiveMapPartnersAndWanted(t *testing.T) {
	path, es := sampleLiveMap(t)
	holds := [][]string{{"A"}, {"A"}, nil, {"B"}, {"B"}, {"B"}}
	answers := [][]string{nil, {"A"}, nil, nil, nil, {"B"}}
	if !LiveMapPartners(es, func(k int) []string { return holds[k] }, func(k int) []string { return answers[k] }) {
		t.Fatal("refused")
	}
	var ps [][]int32
	for _, e := range es {
		ps = append(ps, e.Partners)
	}
	if want := [][]int32{nil, {0}, nil, nil, nil, {3, 4}}; !reflect.DeepEqual(ps, want) {
		t.Fatalf("partners %v, want %v", ps, want)
	}
	for _, buf := range []int{1 << 20, 7, 20} {
		LiveMapReadBuf = buf
		got, err := LiveMapWanted(context.Background(), path, es, func(raw []byte) bool { return strings.Contains(string(raw), "result") })
		LiveMapReadBuf = 1 << 20
		if err != nil {
			t.Fatal(err)
		}
		// 1 (result one) takes 0; 5 (result two) takes 3 and 4; 0 is Always
		if want := []bool{true, true, false, true, true, true}; !reflect.DeepEqual(got, want) {
			t.Errorf("read %d at a time: wanted %v, want %v", buf, got, want)
		}
	}
	// too many partners: no map
	many := make([]LiveMapEntry, 10)
	if LiveMapPartners(many, func(int) []int { return []int{1} }, func(int) []int { return []int{1} }) != true {
		t.Fatal("10 entries with 9 partners each are within the bound")
	}
	many = make([]LiveMapEntry, 2000)
	if LiveMapPartners(many, func(int) []int { return []int{1} }, func(int) []int { return []int{1} }) {
		t.Fatal("2000 entries naming each other were taken")
	}
}

// TestLiveMapDecodeRefusesDamage: a map round-trips; cut short it does not
// decode, and with a byte changed it decodes only as a valid map.
func TestLiveMapDecodeRefusesDamage(t *testing.T) {
	_, es := sampleLiveMap(t)
	es[1].Partners = []int32{0}
	b := EncodeLiveMap("t/1", es)
	got, ok := DecodeLiveMap("t/1", b)
	if !ok || !reflect.DeepEqual(got, es) {
		t.Fatalf("round trip: %v\n%+v\n%+v", ok, got, es)
	}
	if _, ok := DecodeLiveMap("t/2", b); ok {
		t.Fatal("another tag's map was taken")
	}
	for n := 0; n < len(b); n++ {
		if _, ok := DecodeLiveMap("t/1", b[:n]); ok {
			t.Errorf("cut to %d of %d bytes, it still decodes", n, len(b))
		}
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x81
		checkLiveMap(t, c)
	}
}

func checkLiveMap(t *testing.T, b []byte) {
	es, ok := DecodeLiveMap("t/1", b)
	if !ok {
		return
	}
	for _, e := range es {
		if e.Off < 0 || e.Len < 0 || e.Turn < -1 || e.Line < 0 {
			t.Fatalf("decoded %+v", e)
		}
		for _, p := range e.Partners {
			if p < 0 || int(p) >= len(es) {
				t.Fatalf("partner %d of %d", p, len(es))
			}
		}
	}
}

func FuzzDecodeLiveMap(f *testing.F) {
	_, es := sampleLiveMap(f)
	es[1].Partners = []int32{0}
	f.Add(EncodeLiveMap("t/1", es))
	f.Fuzz(checkLiveMap)
}

// TestLiveMapPartnersOneIDEverywhere: a file whose every message holds and
// answers the same id (the ids are session text) gets no map, without a
// search of the partners taken for each partner found (100,000 messages
// took minutes that way).
func TestLiveMapPartnersOneIDEverywhere(t *testing.T) {
	es := make([]LiveMapEntry, 100000)
	one := func(int) []string { return []string{"same"} }
	if LiveMapPartners(es, one, one) {
		t.Fatal("100,000 messages naming each other were taken")
	}
}

// TestLiveMapWantedPastTheEnd: an entry that runs past the end of the file
// (the file is shorter now, or the map damaged) is not taken, and the read
// allocates no more than the file.
func TestLiveMapWantedPastTheEnd(t *testing.T) {
	path, es := sampleLiveMap(t)
	es[2].Len = 1 << 30
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := LiveMapWanted(context.Background(), path, es, func([]byte) bool { return true })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false, true, true, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("wanted %v, want %v", got, want)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("the read allocated %d bytes for a file of a few hundred", n)
	}
	var lines []int
	err = ReadLinesAt(context.Background(), path, HomeOf("codex"), []LineAt{{Num: 3, Offset: es[2].Off, Len: es[2].Len}}, func(r *Record) error {
		lines = append(lines, r.Line.Num)
		return nil
	})
	runtime.ReadMemStats(&before)
	if err != nil || len(lines) != 1 {
		t.Fatalf("ReadLinesAt: %v, lines %v", err, lines)
	}
	if n := before.TotalAlloc - after.TotalAlloc; n > 64<<20 {
		t.Errorf("ReadLinesAt allocated %d bytes for a file of a few hundred", n)
	}
}
