package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// sessctl runs the sessctl built from this repository with args; it fails
// the test when the command fails.
func sessctl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := sessctlRun(t, args...)
	if err != nil {
		t.Fatalf("sessctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func sessctlRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin, err := SessctlBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// checkpointsJSON is the part of `sessctl checkpoints --json` the proofs use.
type checkpointsJSON struct {
	Agent  string `json:"agent"`
	Points []struct {
		N          int    `json:"n"`
		Preview    string `json:"preview"`
		RolledBack bool   `json:"rolled_back"`
	} `json:"points"`
}

func checkpoints(t *testing.T, path string) checkpointsJSON {
	t.Helper()
	var c checkpointsJSON
	if err := json.Unmarshal([]byte(sessctl(t, "checkpoints", "--json", path)), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// livePreviews lists the previews of the turns still in the history.
func (c checkpointsJSON) livePreviews() []string {
	var out []string
	for _, p := range c.Points {
		if !p.RolledBack {
			out = append(out, p.Preview)
		}
	}
	return out
}

func wantTexts(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}
