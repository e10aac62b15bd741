package repair_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

// FuzzRepair: whatever the damage, a repaired file ends with a newline,
// holds no corrupt line, and a second repair finds nothing to do.
func FuzzRepair(f *testing.F) {
	f.Add(uint8(0), cUser+"\n"+cCall[:90]+cQueue+"\n"+cRes[:40])
	f.Add(uint8(0), cUser+"\n"+cCall+"\n"+cCall+"\n")
	f.Add(uint8(1), xMeta+"\n"+xUser+"\n"+xCall+"\n"+xTok)
	f.Add(uint8(2), `{"role":"user","content":"caf`+"\xe9"+`"}`+"\n{\"role\":\"_checkpoint\",\"id\":0}\n{")
	agents := []session.Agent{session.Claude, session.Codex, session.Kimi, session.Clawdcode}
	f.Fuzz(func(t *testing.T, which uint8, in string) {
		a := agents[int(which)%len(agents)]
		p, err := repair.ScanReader(context.Background(), strings.NewReader(in), "f.jsonl", a, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Unrepairable) > 0 {
			return
		}
		var out bytes.Buffer
		if err := p.Write(strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
			t.Fatalf("no final newline: %q", out.String())
		}
		jsonl.Scan(bytes.NewReader(out.Bytes()), func(l *jsonl.Line) error {
			if l.Status.Corrupt() {
				t.Fatalf("line %d of the repaired file is %s: %q", l.Num, l.Status, l.Raw)
			}
			return nil
		})
		p2, err := repair.ScanReader(context.Background(), bytes.NewReader(out.Bytes()), "f.jsonl", a, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(p2.Fixes) > 0 {
			t.Fatalf("a second repair of %q finds %+v", out.String(), p2.Fixes)
		}
	})
}
