package usageexport

import (
	"testing"

	"github.com/sessctl/sessctl/pkg/usage"
)

func TestKey(t *testing.T) {
	named := &usage.Request{Key: usage.HashKey([]byte("msg_01"), []byte("req_01"), true), Line: 7, Time: 1}
	// a request the client names is the same request in any session that
	// holds it (a fork copies it): stats counts it once, the key follows
	if Key("claude", "s1", named) != Key("claude", "s2", named) {
		t.Error("a named request's key depends on the session")
	}
	moved := *named
	moved.Line, moved.Time = 99, 2
	if Key("claude", "s1", named) != Key("claude", "s1", &moved) {
		t.Error("a named request's key depends on its line or time")
	}
	if Key("claude", "s1", named) == Key("kimi", "s1", named) {
		t.Error("two agents share a key")
	}
	other := &usage.Request{Key: usage.HashKey([]byte("msg_01"), []byte("req_02"), true)}
	if Key("claude", "s1", named) == Key("claude", "s1", other) {
		t.Error("two requests share a key")
	}

	// a request known by its line only is one of its session
	var fu usage.FileUsage
	fu.Add(usage.Request{Counted: true, Line: 3}, []byte(`{"type":"event_msg","n":1}`))
	fu.Add(usage.Request{Counted: true, Line: 4}, []byte(`{"type":"event_msg","n":1}`))
	a, b := &fu.Requests[0], &fu.Requests[1]
	if a.LineID() == 0 || a.LineID() == b.LineID() {
		t.Fatalf("line ids %x %x", a.LineID(), b.LineID())
	}
	if Key("codex", "s1", a) == Key("codex", "s2", a) {
		t.Error("a line-keyed request has the same key in two sessions")
	}
	if Key("codex", "s1", a) == Key("codex", "s1", b) {
		t.Error("two identical lines of a file share a key")
	}

	// the derivation is part of schema version 1: a change here must
	// change SchemaVersion (docs/export.md), so the value is pinned (taken
	// from the first version: a regression pin, not an oracle)
	if got, want := Key("claude", "any", named), "0d58eec8822dd1163f16271ad4c9519c"; got != want {
		t.Errorf("key %s, schema 1 says %s", got, want)
	}
}
