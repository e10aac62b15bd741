package index

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func key(i int) string {
	var k [keyLen]byte
	k[0] = 'T'
	k[16] = byte(i)
	k[15] = byte(i >> 8)
	return string(k[:])
}

// A spool gives its entries in key order, each key once with the value it
// was given last, in parts of at most n entries and about partBytes.
func TestSpoolSource(t *testing.T) {
	sp, err := newSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	// 300 keys given in no order, a third of them twice
	want := map[string][]byte{}
	for round := range 2 {
		m := map[string][]byte{}
		for i := 299; i >= 0; i -= 1 + round*2 {
			v := bytes.Repeat([]byte{byte('a' + round)}, 100+i*50)
			m[key(i)], want[key(i)] = v, v
		}
		if err := sp.add(m); err != nil {
			t.Fatal(err)
		}
	}
	src, err := sp.source()
	if err != nil {
		t.Fatal(err)
	}
	if src.len() != 300 {
		t.Fatalf("%d entries, want 300", src.len())
	}
	var prev []byte
	parts := 0
	for i := 0; i < src.len(); {
		keys, values, err := src.part(i, 64)
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for k := range keys {
			if prev != nil && bytes.Compare(prev, keys[k]) >= 0 {
				t.Fatalf("%x after %x", keys[k], prev)
			}
			prev = bytes.Clone(keys[k])
			if !bytes.Equal(values[k], want[string(keys[k])]) {
				t.Fatalf("entry %d: %d bytes of %q, want %d of %q", i+k, len(values[k]), values[k][:1], len(want[string(keys[k])]), want[string(keys[k])][:1])
			}
			size += len(values[k])
		}
		if len(keys) == 0 || len(keys) > 64 || (len(keys) > 1 && size > partBytes) {
			t.Fatalf("a part of %d entries, %d bytes", len(keys), size)
		}
		i += len(keys)
		parts++
	}
	// 300 values of 100 to 15,050 bytes are 2.3 MB: more than 300/64
	// parts by the count
	if parts < 5 {
		t.Errorf("%d parts", parts)
	}
	if !src.has([]byte(key(7))) || src.has([]byte(key(300))) {
		t.Error("has is wrong")
	}
}

// A run whose spool cannot be made drops the entries it would have
// spilled, and reads right all the same; the entries it still holds at
// its close are written.
func TestSpoolNotMade(t *testing.T) {
	defer func(n int) { spillAt = n }(spillAt)
	spillAt = 1
	defer func(f func(string) (*spool, error)) { makeSpool = f }(makeSpool)
	tries := 0
	makeSpool = func(string) (*spool, error) {
		tries++
		return nil, errors.New("no room")
	}
	dir, data := t.TempDir(), t.TempDir()
	ix := Open(dir)
	rs := lineFiles(data, "f", 5, 1)
	for _, r := range rs {
		get(t, ix, r)
	}
	if tries != 1 {
		t.Errorf("the spool was tried %d times, want once", tries)
	}
	spillAt = 1 << 20
	extra := &reader{path: filepath.Join(data, "extra.jsonl")}
	os.WriteFile(extra.path, []byte("extra\n"), 0o600)
	get(t, ix, extra)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = Open(dir)
	defer ix.Close()
	for _, r := range rs {
		if _, from := get(t, ix, r); from != 0 {
			t.Errorf("%s: stored, though its spill failed", r.path)
		}
	}
	if _, from := get(t, ix, extra); from != -1 {
		t.Error("the entry held at the close was not written")
	}
}

// A transaction of a write commits before writeChunk entries once it has
// read writeTouched bytes of the index through the mapping, and the rest
// go in the next ones; where the system cannot tell, it does not.
func TestWriteCommitsWhenTouched(t *testing.T) {
	defer func(n int) { writeChunk = n }(writeChunk)
	defer func(n int) { shedPuts = n }(shedPuts)
	defer func(n int64) { writeTouched = n }(writeTouched)
	writeChunk, shedPuts, writeTouched = 100, 4, 3<<20
	for _, tc := range []struct {
		name string
		step int64 // what each look at the resident bytes finds more
		txs  int
	}{
		// a look every 4 entries finds 1 MiB more: at the third (12
		// entries) the transaction commits; 30 entries take 3
		{"touching", 2 << 20, 3},
		{"unknown", -1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r int64
			defer residentIs(func() int64 {
				if tc.step < 0 {
					return -1
				}
				r += tc.step / 2 // a look before the shed and one after it
				return r
			})()
			dir, data := t.TempDir(), t.TempDir()
			ix := Open(dir)
			ix = reopen(t, ix, dir)
			before := lastTx(t, dir)
			for _, r := range lineFiles(data, "f", 30, 1) {
				get(t, ix, r)
			}
			ix.Close()
			if n := lastTx(t, dir) - before; n != tc.txs {
				t.Errorf("%d transactions, want %d", n, tc.txs)
			}
			if n := keys(t, dir, bucketFiles); n != 30 {
				t.Errorf("%d entries, want 30", n)
			}
		})
	}
}

// A shed inside a write drops what was mapped at its open until the write
// has grown the data, and then everything below its size.
func TestWriteLimit(t *testing.T) {
	l := writeLimit{mapped: 1 << 20, first: -1}
	for _, c := range []struct{ size, want int64 }{
		{4 << 20, 1 << 20}, // a file cut short: its meta says more than was mapped
		{4 << 20, 1 << 20},
		{5 << 20, 5 << 20},
	} {
		if got := l.of(c.size); got != c.want {
			t.Errorf("of(%d) = %d, want %d", c.size, got, c.want)
		}
	}
	l = writeLimit{mapped: 8 << 20, first: -1}
	l.of(1 << 20)
	if got := l.of(2 << 20); got != 8<<20 {
		t.Errorf("of a grown size below what was mapped = %d, want %d", got, 8<<20)
	}
}
