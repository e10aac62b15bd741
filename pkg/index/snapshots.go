package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Discovery snapshots (session.SnapshotCache) are files of their own
// beside the index, one per set of roots: a store of 100,000 sessions
// makes one of about 10 MB, more than the index keeps of a whole run
// (MaxRun), and read as a stream it costs a run no more memory than the
// discovery it stands for. Each file is
//
//	snapMagic, the length of the build's stamp and the stamp (a snapshot
//	of another build is not read), the snapshot, its length (8 bytes) and
//	its CRC-32C (4 bytes)
//
// written under a temporary name and renamed over the old one, so that a
// run reads a whole snapshot or none. It is not synced: a snapshot cut
// short by a crash fails its length or its checksum and is made again.

const (
	snapMagic   = "sessctl-snapshot\n"
	snapPrefix  = "discovery-"
	snapSuffix  = ".snap"
	maxSnaps    = 8 // snapshots kept, the newest written
	snapTrailer = 12
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (ix *Index) snapPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(filepath.Dir(ix.path), snapPrefix+hex.EncodeToString(sum[:12])+snapSuffix)
}

// LoadSnapshot implements session.SnapshotCache.
func (ix *Index) LoadSnapshot(key string) io.ReadCloser {
	if ix == nil {
		return nil
	}
	f, err := os.Open(ix.snapPath(key))
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	head := make([]byte, len(snapMagic)+4+len(ix.stamp))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < int64(len(head)+snapTrailer) {
		f.Close()
		return nil
	}
	want := append(binary.BigEndian.AppendUint32([]byte(snapMagic), uint32(len(ix.stamp))), ix.stamp...)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, want) {
		f.Close()
		return nil
	}
	n := fi.Size() - int64(len(head)) - snapTrailer
	return &snapReader{f: f, body: io.LimitReader(f, n), n: n, crc: crc32.New(castagnoli)}
}

// snapReader reads a snapshot's body, and at its end checks its length
// and checksum: io.EOF only when they hold.
type snapReader struct {
	f    *os.File
	body io.Reader
	n    int64
	crc  hash.Hash32
	err  error
}

var errSnapDamaged = errors.New("index: damaged snapshot")

func (r *snapReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.body.Read(p)
	r.crc.Write(p[:n])
	if err == io.EOF {
		var t [snapTrailer]byte
		r.err = io.EOF
		if _, e := io.ReadFull(r.f, t[:]); e != nil || binary.BigEndian.Uint64(t[:8]) != uint64(r.n) ||
			binary.BigEndian.Uint32(t[8:]) != r.crc.Sum32() {
			r.err = errSnapDamaged
		}
		if n > 0 {
			return n, nil
		}
		return 0, r.err
	}
	return n, err
}

func (r *snapReader) Close() error { return r.f.Close() }

// SaveSnapshot implements session.SnapshotCache.
func (ix *Index) SaveSnapshot(key string, write func(io.Writer) error) {
	if ix == nil {
		return
	}
	dir := filepath.Dir(ix.path)
	tmp, err := os.CreateTemp(dir, snapPrefix+"*.tmp")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name()) // once renamed, removes nothing
	cw := &countingWriter{w: tmp, crc: crc32.New(castagnoli)}
	head := append(binary.BigEndian.AppendUint32([]byte(snapMagic), uint32(len(ix.stamp))), ix.stamp...)
	_, err = tmp.Write(head)
	if err == nil {
		err = write(cw)
	}
	if err == nil {
		t := binary.BigEndian.AppendUint64(nil, uint64(cw.n))
		_, err = tmp.Write(binary.BigEndian.AppendUint32(t, cw.crc.Sum32()))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil || os.Rename(tmp.Name(), ix.snapPath(key)) != nil {
		return
	}
	pruneSnapshots(dir)
}

type countingWriter struct {
	w   io.Writer
	crc hash.Hash32
	n   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// pruneSnapshots removes all but the maxSnaps newest snapshots, and the
// temporary files of writes that a crash cut short an hour ago or more.
func pruneSnapshots(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type aged struct {
		name string
		at   time.Time
	}
	var snaps []aged
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, snapPrefix) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		switch {
		case strings.HasSuffix(name, ".tmp"):
			if time.Since(fi.ModTime()) > time.Hour {
				os.Remove(filepath.Join(dir, name))
			}
		case strings.HasSuffix(name, snapSuffix):
			snaps = append(snaps, aged{name, fi.ModTime()})
		}
	}
	if len(snaps) <= maxSnaps {
		return
	}
	slices.SortFunc(snaps, func(a, b aged) int { return b.at.Compare(a.at) })
	for _, s := range snaps[maxSnaps:] {
		os.Remove(filepath.Join(dir, s.name))
	}
}
