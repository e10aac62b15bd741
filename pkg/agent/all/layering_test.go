package all_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the repository root seen from this package.
const repoRoot = "../../.."

// agentNames are the constants of pkg/session that name an agent.
var agentNames = map[string]bool{"Kimi": true, "KimiCode": true, "Claude": true, "Codex": true, "Clawdcode": true}

// homeDir matches the agents' homes and the files of pkg/session that
// declare the agents, where agent names may be compared.
var homeDir = regexp.MustCompile(`^pkg/(agent/[a-z]+/|session/(record|home)\.go$)`)

// TestNoAgentSwitches: outside the homes, no code compares an agent with
// one of the agent constants (==, !=, or a switch case): operations ask the
// agent's home instead (docs/architecture.md).
func TestNoAgentSwitches(t *testing.T) {
	var found []string
	fset := token.NewFileSet()
	walkGo(t, func(rel string) {
		if homeDir.MatchString(rel) {
			return
		}
		f, err := parser.ParseFile(fset, filepath.Join(repoRoot, rel), nil, 0)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		inSession := f.Name.Name == "session"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isAgentConst(n.X, inSession) || isAgentConst(n.Y, inSession)) {
					found = append(found, fset.Position(n.Pos()).String())
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if isAgentConst(e, inSession) {
						found = append(found, fset.Position(e.Pos()).String())
					}
				}
			}
			return true
		})
	})
	byFile := map[string]int{}
	for _, pos := range found {
		rel, _ := filepath.Rel(repoRoot, strings.SplitN(pos, ":", 2)[0])
		byFile[filepath.ToSlash(rel)]++
	}
	var files []string
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		t.Errorf("%s compares agent names %d times: ask the agent's home instead (docs/architecture.md)", f, byFile[f])
	}
	t.Logf("%d agent comparisons outside the homes, in %d files", len(found), len(files))
}

// TestOperationsDoNotImportHomes: only cmd/sessctl, the homes themselves,
// and tests link the homes in.
func TestOperationsDoNotImportHomes(t *testing.T) {
	fset := token.NewFileSet()
	walkGo(t, func(rel string) {
		if strings.HasPrefix(rel, "pkg/agent/") || strings.HasPrefix(rel, "cmd/") {
			return
		}
		f, err := parser.ParseFile(fset, filepath.Join(repoRoot, rel), nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		for _, imp := range f.Imports {
			if strings.Contains(imp.Path.Value, "/pkg/agent/") {
				t.Errorf("%s imports %s: operations reach the homes through session.HomeOf and their own interfaces", rel, imp.Path.Value)
			}
		}
	})
}

// walkGo calls fn with the slash path, relative to the repository, of
// every non-test Go file.
func walkGo(t *testing.T, fn func(rel string)) {
	t.Helper()
	err := filepath.WalkDir(repoRoot, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			switch e.Name() {
			case ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, p)
		fn(filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isAgentConst reports whether e is session.Kimi, session.Claude, … (or
// the bare name inside package session).
func isAgentConst(e ast.Expr, inSession bool) bool {
	if id, ok := e.(*ast.Ident); ok && inSession {
		return agentNames[id.Name]
	}
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "session" {
			return agentNames[sel.Sel.Name]
		}
	}
	return false
}
