package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sessctl/sessctl/internal/fakesecret"
)

// TestMain lets testscript run sessctl in-process as the "sessctl" command.
// The tests that run it in-process (runCLI) read no index, so that they
// leave the user's cache alone; index_test.go turns it on with a cache of
// its own, and the scripts (their own HOME) read through one.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) != "sessctl" {
		os.Setenv("SESSCTL_NO_INDEX", "1")
	}
	testscript.Main(m, map[string]func(){
		"sessctl": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script. Each script gets
// $REPO (the repository root, for testdata/sessions) and $SAMPLES (the
// shared samples folder; scripts that need it start with
// `[!samples] skip`, which skips them cleanly when the folder is absent).
func TestScripts(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	samples := filepath.Join(repo, "..", "shared", "samples")
	_, err := os.Stat(samples)
	haveSamples := err == nil
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", repo)
			e.Setenv("SAMPLES", samples)
			e.Setenv("NO_COLOR", "1")
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("TZ", "UTC")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "samples" {
				return haveSamples, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") == "1",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":      cmdStatus,
			"fakesecrets": cmdFakeSecrets,
			"trashids":    cmdTrashIDs,
		},
	})
}

// runCLI runs sessctl in-process and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"sessctl"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestVersion(t *testing.T) {
	out, _, code := runCLI(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "sessctl ") {
		t.Fatalf("--version: code %d, %q", code, out)
	}
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	_, errOut, code := runCLI(t, "frobnicate")
	if code != exitError || !strings.Contains(errOut, "sessctl: error:") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

// cmdFakeSecrets is the script command "fakesecrets FILE...": it replaces
// every @FAKE:<name>@ (and @FAKE:<name>:json@) in the files with the fake
// secret of that name (internal/fakesecret), so that scripts hold no string
// that looks like a credential, only the names.
func cmdFakeSecrets(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: fakesecrets FILE...")
	}
	for _, f := range args {
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(fakesecret.Expand(ts.ReadFile(f))), 0o600))
	}
}

// trashEntryID is the shape of a trash entry's name: its time and a random
// suffix, different in every run.
var trashEntryID = regexp.MustCompile(`\b\d{8}T\d{6}Z-[0-9a-f]{8}\b`)

// cmdTrashIDs is the script command "trashids FILE...": it replaces every
// trash entry id in the files (stdout, stderr or a file of the work
// directory) with YYYYMMDDTHHMMSSZ-XXXXXXXX, which has the same width, so
// that output naming entries can be compared with cmp.
func cmdTrashIDs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: trashids FILE...")
	}
	for _, f := range args {
		s := trashEntryID.ReplaceAllString(ts.ReadFile(f), "YYYYMMDDTHHMMSSZ-XXXXXXXX")
		name := f
		if f == "stdout" || f == "stderr" {
			name = f + ".scrubbed"
		}
		ts.Check(os.WriteFile(ts.MkAbs(name), []byte(s), 0o600))
	}
}

// cmdStatus is the script command "status N PROGRAM ARGS...": it runs the
// program like exec and fails unless it exits with status N (exec and
// "! exec" only tell zero from non-zero). stdout and stderr are kept for
// cmp and the like, as after exec.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("status: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
