package jsonl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// encoder is shared: EncodeAll may be called concurrently, and making one
// per fuzz input would dominate the fuzzer's time.
var encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))

func compress(t testing.TB, b []byte) []byte { return encoder.EncodeAll(b, nil) }

// readAll reads every line of r with a Reader: their bytes, statuses and
// offsets, as one comparable record.
func readZAll(t testing.TB, r io.Reader) (lines []Line, damage *CompressedError) {
	rd := NewReader(r)
	rd.MaxLineSize = 1 << 10
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return lines, rd.Damage()
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		lines = append(lines, l.Clone())
	}
}

func TestOpenReadsCompressedLikePlain(t *testing.T) {
	dir := t.TempDir()
	content := []byte("{\"a\":1}\n\n{\"b\":\"x\"}\r\nnot json\n" + string(bytes.Repeat([]byte("y"), 3000)) + "\n{\"torn\":")
	plain := filepath.Join(dir, "rollout-x.jsonl")
	os.WriteFile(plain, content, 0o644)
	os.WriteFile(plain+".zst", compress(t, content), 0o644)
	os.WriteFile(plain+".zst.3", compress(t, content), 0o644) // a rotation of the compressed file
	want, _ := readZAll(t, mustOpen(t, plain))
	for _, p := range []string{plain + ".zst", plain + ".zst.3"} {
		f := mustOpen(t, p)
		if _, ok := f.(io.ReaderAt); ok {
			t.Errorf("%s: a compressed file must not offer ReadAt on its compressed bytes", p)
		}
		got, damage := readZAll(t, f)
		if damage != nil {
			t.Errorf("%s: damage %v", p, damage)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines, want %d", p, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].Raw, want[i].Raw) || got[i].Status != want[i].Status || got[i].Offset != want[i].Offset || got[i].EOL != want[i].EOL {
				t.Errorf("%s line %d: %+v, want %+v", p, i+1, got[i], want[i])
			}
		}
		// random access through a decompressed temporary copy
		rf, err := OpenRandom(p)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 7)
		if _, err := rf.ReadAt(b, 9); err != nil || string(b) != `{"b":"x` {
			t.Errorf("OpenRandom ReadAt: %q, %v", b, err)
		}
		rf.Close()
	}
}

func mustOpen(t testing.TB, p string) File {
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A damaged stream ends the read with one Undecodable line at the offset
// where the content stops, after every line decoded before it.
func TestDamagedStreamIsALastCorruptLine(t *testing.T) {
	var frames []byte
	enc, _ := zstd.NewWriter(nil)
	for i := 0; i < 5; i++ {
		frames = enc.EncodeAll([]byte("{\"n\":1}\n{\"n\":2}\n"), frames)
	}
	cut := frames[:len(frames)-4]
	lines, damage := readZAll(t, must(Decompressed(bytes.NewReader(cut), "cut.zst")))
	if damage == nil {
		t.Fatal("a cut stream read without damage")
	}
	last := lines[len(lines)-1]
	if last.Status != Undecodable || !last.Status.Corrupt() {
		t.Fatalf("last line %v, want undecodable", last.Status)
	}
	if len(lines) != 9 || last.Offset != 64 || damage.Offset != 64 || damage.Path != "cut.zst" {
		t.Errorf("%d lines, damage at %d (%+v), want 8 good lines and the damage at byte 64", len(lines), last.Offset, damage)
	}
	for _, l := range lines[:8] {
		if l.Status != OK {
			t.Errorf("line %d: %v", l.Num, l.Status)
		}
	}
}

func must(r io.ReadCloser, err error) io.ReadCloser {
	if err != nil {
		panic(err)
	}
	return r
}

// FuzzCompressedReader feeds arbitrary bytes to the compressed reader, raw
// and as a valid stream: it never panics or hangs, a damaged stream is
// always a last Undecodable line, and a valid stream reads exactly like the
// plain bytes.
func FuzzCompressedReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), uint16(0))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3, 0x01, 0x00, 0x00}, uint16(3))
	f.Add([]byte("x\n"), uint16(9))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		// raw bytes taken for a .zst (a few bytes can expand to megabytes
		// of RLE blocks: only the first 4 MiB of content are read)
		rd := NewReader(io.LimitReader(must(Decompressed(bytes.NewReader(data), "f.zst")), 4<<20))
		rd.MaxLineSize = 1 << 10
		var last Status
		for {
			l, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			last = l.Status
		}
		if damage := rd.Damage(); damage != nil {
			if last != Undecodable {
				t.Fatalf("damage %v without a last undecodable line", damage)
			}
			if !errors.As(error(damage), new(*CompressedError)) {
				t.Fatal("damage is not a CompressedError")
			}
		}
		// the bytes compressed: the same lines as plain
		z := compress(t, data)
		want, _ := readZAll(t, bytes.NewReader(data))
		got, damage := readZAll(t, must(Decompressed(bytes.NewReader(z), "f.zst")))
		if damage != nil || len(got) != len(want) {
			t.Fatalf("valid stream: %d lines (damage %v), want %d", len(got), damage, len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].Raw, want[i].Raw) || got[i].Status != want[i].Status || got[i].Offset != want[i].Offset {
				t.Fatalf("line %d differs", i+1)
			}
		}
		// and cut short: never more lines than the whole, the cut reported
		if n := int(cut) % (len(z) + 1); n < len(z) {
			got, damage := readZAll(t, must(Decompressed(bytes.NewReader(z[:n]), "f.zst")))
			if damage == nil && n > 0 {
				t.Fatalf("a stream cut at %d of %d read without damage", n, len(z))
			}
			if len(got) > len(want)+1 {
				t.Fatalf("cut stream: %d lines, the whole has %d", len(got), len(want))
			}
		}
	})
}
