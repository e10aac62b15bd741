package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// copyTree copies the directory from into to, keeping modification times.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compressFile writes p's bytes, zstd-compressed at Codex's level 3, to
// p+".zst" with p's mode and mtime (what Codex's rollout maintenance keeps),
// and removes p.
func compressFile(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".zst", enc.EncodeAll(b, nil), fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p+".zst", fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// codexTrees returns a plain Codex store (the repository's fixture, and the
// real 0.169 samples when they are there) and the same store with every
// rollout compressed the way Codex compresses them.
func codexTrees(t *testing.T) (plain, comp string) {
	t.Helper()
	repo, _ := filepath.Abs("../..")
	base := t.TempDir()
	plain, comp = filepath.Join(base, "plain"), filepath.Join(base, "comp")
	copyTree(t, filepath.Join(repo, "testdata", "sessions", "codex"), plain)
	if s := filepath.Join(repo, "..", "shared", "samples", "real-clients", "codex-home", "codex"); dirExists(s) {
		copyTree(t, s, plain)
	}
	copyTree(t, plain, comp)
	n := 0
	filepath.WalkDir(comp, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasPrefix(e.Name(), "rollout-") && strings.HasSuffix(p, ".jsonl") {
			compressFile(t, p)
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no rollout to compress")
	}
	return plain, comp
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// normalized decodes JSON output with the tree's root and the ".zst" of
// file names taken out, and without the sizes on disk (which compression
// changes, as it should).
func normalized(t *testing.T, out, root string) any {
	t.Helper()
	out = strings.ReplaceAll(out, root, "ROOT")
	out = strings.ReplaceAll(out, ".jsonl.zst", ".jsonl")
	// one JSON value, or a stream of them (show --json)
	var vs []any
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		vs = append(vs, v)
	}
	var v any = vs
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"size", "bytes", "store_bytes", "rotation_bytes", "now"} {
				delete(x, k)
			}
			for k, e := range x {
				x[k] = strip(e)
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		}
		return v
	}
	return strip(v)
}

// A compressed Codex store reads exactly like the plain one: ls, stats,
// check and show give the same JSON but for the sizes on disk.
func TestCompressedTreeReadsLikePlain(t *testing.T) {
	plain, comp := codexTrees(t)
	t.Setenv("TZ", "UTC")
	for _, args := range [][]string{
		{"ls", "--json", "--root"},
		{"stats", "--all", "--json", "--root"},
		{"stats", "--all", "--by", "model", "--json", "--root"},
	} {
		po, pe, pc := runCLI(t, append(args, plain)...)
		co, ce, cc := runCLI(t, append(args, comp)...)
		if pc != 0 || cc != 0 {
			t.Fatalf("%v: exit %d / %d\n%s\n%s", args, pc, cc, pe, ce)
		}
		if !strings.Contains(co, ".jsonl.zst") {
			t.Errorf("%v: the compressed tree's output names no .jsonl.zst file", args)
		}
		if p, c := normalized(t, po, plain), normalized(t, co, comp); !reflect.DeepEqual(p, c) {
			t.Errorf("%v: the compressed tree reads differently\nplain: %s\ncompressed: %s", args, po, co)
		}
	}
	// per file: check and show
	var files []string
	filepath.WalkDir(comp, func(p string, e fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl.zst") {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		pf := strings.Replace(strings.TrimSuffix(f, ".zst"), comp, plain, 1)
		for _, cmd := range [][]string{{"check", "--json"}, {"show", "--json"}, {"checkpoints", "--json"}} {
			po, _, pc := runCLI(t, append(cmd, pf)...)
			co, _, cc := runCLI(t, append(cmd, f)...)
			if pc != cc {
				t.Errorf("%v %s: exit %d plain, %d compressed", cmd, filepath.Base(f), pc, cc)
			}
			if p, c := normalized(t, po, plain), normalized(t, co, comp); !reflect.DeepEqual(p, c) {
				t.Errorf("%v %s: reads differently\nplain: %.2000s\ncompressed: %.2000s", cmd, filepath.Base(f), po, co)
			}
		}
	}
}

// cleanup plans a compressed store as it plans the plain one, and removes
// the .zst files with their sessions.
func TestCleanupCompressedTree(t *testing.T) {
	plain, comp := codexTrees(t)
	old := time.Now().Add(-60 * 24 * time.Hour)
	for _, root := range []string{plain, comp} {
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				os.Chtimes(p, old, old)
			}
			return nil
		})
	}
	args := []string{"cleanup", "--json", "--older-than", "30d", "--root"}
	po, pe, pc := runCLI(t, append(args, plain)...)
	co, ce, cc := runCLI(t, append(args, comp)...)
	if pc != 0 || cc != 0 {
		t.Fatalf("exit %d / %d\n%s\n%s", pc, cc, pe, ce)
	}
	if !strings.Contains(co, ".jsonl.zst") {
		t.Fatalf("the plan names no compressed rollout:\n%s", co)
	}
	if p, c := normalized(t, po, plain), normalized(t, co, comp); !reflect.DeepEqual(p, c) {
		t.Errorf("cleanup plans the compressed store differently\nplain: %s\ncompressed: %s", po, co)
	}
	if _, errOut, code := runCLI(t, "cleanup", "--apply", "--quiet", "--older-than", "30d", "--root", comp); code != 0 {
		t.Fatalf("cleanup --apply: exit %d: %s", code, errOut)
	}
	filepath.WalkDir(comp, func(p string, e fs.DirEntry, err error) error {
		if err == nil && strings.Contains(e.Name(), "rollout-") {
			t.Errorf("left after cleanup --apply: %s", p)
		}
		return nil
	})
}

// When a rollout exists in both forms, the plain file is the session (as
// for Codex): listed once, read from the plain file.
func TestPlainRolloutWinsOverCompressed(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	root := t.TempDir()
	copyTree(t, filepath.Join(repo, "testdata", "sessions", "codex"), root)
	var plain string
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") && strings.HasPrefix(e.Name(), "rollout-") {
			plain = p
		}
		return nil
	})
	// the compressed form holds only the first line: a stale copy
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	first := b[:strings.IndexByte(string(b), '\n')+1]
	stale := filepath.Join(t.TempDir(), filepath.Base(plain))
	os.WriteFile(stale, first, 0o644)
	compressFile(t, stale)
	zb, _ := os.ReadFile(stale + ".zst")
	os.WriteFile(plain+".zst", zb, 0o644)
	old := time.Now().Add(time.Hour) // the compressed form even looks newer
	os.Chtimes(plain+".zst", old, old)

	for _, arg := range []string{root, plain + ".zst"} {
		out, errOut, code := runCLI(t, "ls", "--json", arg)
		if code != 0 {
			t.Fatalf("ls %s: exit %d: %s", arg, code, errOut)
		}
		var ss []struct {
			Main    string `json:"main"`
			Records int    `json:"records"`
		}
		if err := json.Unmarshal([]byte(out), &ss); err != nil {
			t.Fatal(err)
		}
		if len(ss) != 1 || ss[0].Main != plain || ss[0].Records < 2 {
			t.Errorf("ls %s: want the plain file alone, got %+v", arg, ss)
		}
	}
	// the hidden .zst goes with its session: left, it would come back as it
	aged := time.Now().Add(-60 * 24 * time.Hour)
	os.Chtimes(plain, aged, aged)
	os.Chtimes(plain+".zst", aged, aged)
	if _, errOut, code := runCLI(t, "cleanup", "--apply", "--quiet", "--older-than", "30d", "--root", root); code != 0 {
		t.Fatalf("cleanup: exit %d: %s", code, errOut)
	}
	for _, p := range []string{plain, plain + ".zst"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("cleanup left %s", p)
		}
	}
}

// A truncated, corrupt or window-greedy .zst is reported like a corrupt
// line, with its path and the offset in the content, and reading it neither
// hangs nor takes the memory its header asks for.
func TestDamagedCompressedRollout(t *testing.T) {
	_, comp := codexTrees(t)
	var f string
	filepath.WalkDir(comp, func(p string, e fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl.zst") && f == "" {
			f = p
		}
		return nil
	})
	good, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	// content compressed in small frames, so that a cut leaves the first lines readable
	dec, _ := zstd.NewReader(nil)
	content, err := dec.DecodeAll(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	var framed []byte
	for i := 0; i < len(content); i += 1000 {
		framed = enc.EncodeAll(content[i:min(i+1000, len(content))], framed)
	}
	flipped := append([]byte(nil), framed...)
	for i := len(flipped) / 2; i < len(flipped)/2+16; i++ {
		flipped[i] ^= 0x5a
	}
	// a frame header asking for a 2 GiB window (window descriptor: exponent 21)
	greedy := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3, 0x01, 0x00, 0x00}
	cases := map[string][]byte{
		"truncated": framed[:len(framed)*2/3],
		"corrupt":   flipped,
		"greedy":    greedy,
		"garbage":   []byte("this is not zstd at all\n"),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCLI(t, "check", "--json", f)
			if code != 1 {
				t.Fatalf("check: exit %d, want 1 (problems found)\n%s%s", code, out, errOut)
			}
			var res struct {
				Files []struct {
					Problems []struct {
						Path    string `json:"path"`
						Kind    string `json:"kind"`
						Line    int    `json:"line"`
						Offset  int64  `json:"offset"`
						Message string `json:"message"`
					} `json:"problems"`
				} `json:"files"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			found := false
			for _, r := range res.Files {
				for _, p := range r.Problems {
					if p.Path == f && p.Kind == "corrupt_line" && strings.Contains(p.Message, "compressed stream damaged") {
						found = true
						if name == "truncated" && (p.Offset == 0 || p.Line < 2) {
							t.Errorf("a cut after several frames is reported at line %d, offset %d: the readable part was lost", p.Line, p.Offset)
						}
					}
				}
			}
			if !found {
				t.Errorf("no damaged-stream problem with the file's path:\n%s", out)
			}
			if _, errOut, code := runCLI(t, "ls", "--json", f); code != 0 {
				t.Errorf("ls of a damaged .zst: exit %d: %s", code, errOut)
			}
			if _, errOut, code := runCLI(t, "stats", "--json", f); code != 0 {
				t.Errorf("stats of a damaged .zst: exit %d: %s", code, errOut)
			}
		})
	}
}

// The real Codex 0.169 rollout whose last token_count was removed before a
// resume (shared samples): its per-response records add up to 29,817
// tokens, its cumulative counters to 19,826 (shared/formats/codex.md §5).
// stats counts the records, keeps the cumulative (ccusage) view beside
// them, and says why they differ; compressed, it reads the same.
func TestStatsPerResponseRecords(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	f := filepath.Join(repo, "..", "shared", "samples", "real-clients", "codex-home", "codex", "sessions", "2026", "11", "22",
		"rollout-2026-11-22T03-04-55-01a20136-c2f0-7581-b713-c1cef388d89c.jsonl")
	if _, err := os.Stat(f); err != nil {
		t.Skip("shared samples not available")
	}
	z := filepath.Join(t.TempDir(), filepath.Base(f))
	b, _ := os.ReadFile(f)
	os.WriteFile(z, b, 0o644)
	compressFile(t, z)
	for _, p := range []string{f, z + ".zst"} {
		out, errOut, code := runCLI(t, "stats", "--json", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var v struct {
			Consumption struct {
				Recorded    struct{ Input, Output, CacheRead int64 } `json:"recorded"`
				AsCCUsage   struct{ Input, Output, CacheRead int64 } `json:"as_ccusage"`
				PerResponse int                                      `json:"per_response_records"`
				PerRespView int64                                    `json:"per_response_view_tokens"`
				CumulView   int64                                    `json:"cumulative_view_tokens"`
				ViewsDiffer string                                   `json:"views_differ"`
			} `json:"consumption"`
		}
		// the totals' field names
		out = strings.NewReplacer(`"input_tokens"`, `"Input"`, `"output_tokens"`, `"Output"`, `"cache_read_tokens"`, `"CacheRead"`).Replace(out)
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		c := v.Consumption
		if got := c.Recorded.Input + c.Recorded.Output + c.Recorded.CacheRead; got != 29817 {
			t.Errorf("%s: recorded %d, want the records' 29,817", filepath.Base(p), got)
		}
		if got := c.AsCCUsage.Input + c.AsCCUsage.Output + c.AsCCUsage.CacheRead; got != 19826 {
			t.Errorf("%s: as ccusage %d, want the cumulative 19,826", filepath.Base(p), got)
		}
		if c.PerResponse != 3 || c.PerRespView != 29817 || c.CumulView != 19826 || !strings.Contains(c.ViewsDiffer, "19,826") {
			t.Errorf("%s: per-response records %d, views_differ %q", filepath.Base(p), c.PerResponse, c.ViewsDiffer)
		}
	}
}

// repair, revert and compact on a compressed rollout write the plain file
// and keep the .zst, byte for byte, as the rotation; a dry run changes
// nothing.
func TestWritesOnCompressedRollout(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	sample := filepath.Join(repo, "..", "shared", "samples", "real-clients", "codex-home", "codex", "sessions", "2026", "11", "22",
		"rollout-2026-11-22T03-04-56-01a20136-c519-7a53-8be5-a1cfe016336f.jsonl") // a torn line glued to a record (line 22)
	if _, err := os.Stat(sample); err != nil {
		t.Skip("shared samples not available")
	}
	for _, cmd := range [][]string{
		{"repair", "--force"},
		{"revert", "--force", "--checkpoint", "1"},
		{"compact", "--force"},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			dir := t.TempDir()
			plain := filepath.Join(dir, filepath.Base(sample))
			b, _ := os.ReadFile(sample)
			os.WriteFile(plain, b, 0o644)
			old := time.Now().Add(-8 * 24 * time.Hour)
			os.Chtimes(plain, old, old)
			compressFile(t, plain)
			z, _ := os.ReadFile(plain + ".zst")

			if _, errOut, code := runCLI(t, append(append([]string{}, cmd...), "--dry-run", plain+".zst")...); code != 0 {
				t.Fatalf("dry run: exit %d: %s", code, errOut)
			}
			if got, _ := os.ReadFile(plain + ".zst"); string(got) != string(z) {
				t.Fatal("the dry run changed the .zst")
			}
			if _, err := os.Stat(plain); err == nil {
				t.Fatal("the dry run wrote the plain file")
			}

			out, errOut, code := runCLI(t, append(append([]string{}, cmd...), plain+".zst")...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			if !strings.Contains(errOut+out, "now the plain") {
				t.Errorf("the output does not say where the session went:\n%s%s", out, errOut)
			}
			if _, err := os.Stat(plain + ".zst"); err == nil {
				t.Error("the .zst is still there")
			}
			if got, _ := os.ReadFile(plain + ".zst.1"); string(got) != string(z) {
				t.Error("the rotation .zst.1 is not the compressed original")
			}
			nb, err := os.ReadFile(plain)
			if err != nil {
				t.Fatal(err)
			}
			switch cmd[0] {
			case "repair":
				if len(nb) >= len(b) {
					t.Errorf("repair left %d bytes of %d: the torn line is still there", len(nb), len(b))
				}
			default:
				if !strings.HasPrefix(string(nb), string(b)) || len(nb) == len(b) {
					t.Errorf("%s: the plain file is not the content plus what %s appends", cmd[0], cmd[0])
				}
			}
			if cmd[0] == "revert" {
				// restoring the compressed rotation brings back its content, plain
				if _, errOut, code := runCLI(t, "restore", "--rotation", "1", "--force", plain); code != 0 {
					t.Fatalf("restore: exit %d: %s", code, errOut)
				}
				if got, _ := os.ReadFile(plain); string(got) != string(b) {
					t.Error("restore of the .zst.1 rotation did not bring back the original content")
				}
				if _, err := os.Stat(plain + ".2"); err != nil {
					t.Errorf("the reverted file was not kept as .2: %v", err)
				}
				os.Remove(plain + ".2")
			}
			// the session is the plain file now, with the rotation
			out, _, _ = runCLI(t, "ls", "--json", dir)
			if !strings.Contains(out, `"rotations": 1`) || strings.Count(out, `"main":`) != 1 {
				t.Errorf("ls after %s:\n%s", cmd[0], out)
			}
		})
	}
}
