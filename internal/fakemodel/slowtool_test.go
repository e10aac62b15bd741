package fakemodel

import "testing"

// TestSlowTool: SLOWTOOL makes the default shell call one that runs long
// enough for a test to kill the client during it; without it the call is ls.
func TestSlowTool(t *testing.T) {
	for _, c := range []struct {
		name string
		plan func([]byte) (Plan, error)
		body string
		want string
	}{
		{"claude slow", PlanAnthropic, claudeBody(t, firstUser("SLOWTOOL list")), `{"command":"echo waiting \u0026\u0026 sleep 60"}`},
		{"claude", PlanAnthropic, claudeBody(t, firstUser("list")), `{"command":"ls"}`},
		{"codex slow", PlanResponses, codexBody(t, codexUser("SLOWTOOL list")), `{"cmd":"echo waiting \u0026\u0026 sleep 60"}`},
		{"codex", PlanResponses, codexBody(t, codexUser("list")), `{"cmd":"ls"}`},
	} {
		p, err := c.plan([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Tool == nil || string(p.Tool.Input) != c.want {
			t.Errorf("%s: tool %+v, want input %s", c.name, p.Tool, c.want)
		}
	}
}
