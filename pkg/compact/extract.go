package compact

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// extractor builds the default summary from the compacted messages without
// a model: it keeps the user's requests with the assistant's last words on
// each, the files touched, the commands run, and the errors met. Its memory
// is bounded whatever the length of the session.
type extractor struct {
	seq      int
	requests []request // the most recent maxRequests
	dropped  int       // older requests not kept
	earlier  []string  // summaries of earlier compactions
	asked    []string  // questions in the assistant's messages since the last request
	findings []string  // the assistant's last messages
	file     map[string]*fileInfo
	commands []string
	errs     []errNote
	calls    map[string]string // call id → "Name: input" (of the current request)
	users    int
}

type request struct {
	text    string
	outcome string
}

type fileInfo struct {
	path     string
	written  bool
	mentions int
	last     int
}

type errNote struct {
	what       string
	err        string
	resolution string
}

const (
	maxRequests = 200
	maxCommands = 12
	maxErrors   = 12
	maxFindings = 3
	maxFiles    = 5000
)

func newExtractor() *extractor {
	return &extractor{file: map[string]*fileInfo{}, calls: map[string]string{}}
}

var (
	writeTools = map[string]bool{
		"write": true, "edit": true, "multiedit": true, "notebookedit": true, "writefile": true,
		"strreplacefile": true, "apply_patch": true, "create_file": true, "str_replace": true,
		"edit_file": true, "write_file": true, "replace": true, "patch": true,
		"str_replace_based_edit_tool": true, "write_to_file": true, "replace_in_file": true,
	}
	shellTools = map[string]bool{
		"bash": true, "shell": true, "exec_command": true, "local_shell": true, "run_shell_command": true,
		"run_terminal_cmd": true, "execute_command": true, "powershell": true,
	}
	pathKeys   = []string{"file_path", "path", "filename", "notebook_path", "file", "target_file", "absolute_path"}
	patchRe    = regexp.MustCompile(`(?m)^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$`)
	pathRe     = regexp.MustCompile(`(?:^|[\s"'` + "`" + `(\[<])((?:~|\.{1,2})?/?(?:[A-Za-z0-9_@.+-]+/)+[A-Za-z0-9_@.+-]+\.[A-Za-z0-9]{1,8}|[A-Za-z0-9_@+-][A-Za-z0-9_@.+-]*\.(?:go|py|ts|tsx|js|jsx|mjs|rs|md|json|jsonl|yaml|yml|toml|txt|c|h|cc|cpp|hpp|java|kt|rb|sh|sql|html|css|scss|vue|swift|php|cs|lua|ex|exs|proto|mod|lock|cfg|ini|xml))(?:$|[\s"'` + "`" + `)\]>:,;.!?])`)
	exitCodeRe = regexp.MustCompile(`(?:Process exited with code|exit code:?|exited with code) ([1-9][0-9]*)`)
	questionRe = regexp.MustCompile(`[^.!?\n]*\?`)
)

func (e *extractor) add(r *session.Record) {
	e.seq++
	switch {
	case r.Kind == session.KindCompaction || r.Role == session.RoleUser && strings.HasPrefix(r.Text, KimiSummaryPrefix):
		e.earlier = append(e.earlier, clip(earlierSummary(r.Text), 600, true))
		if len(e.earlier) > 3 {
			e.earlier = e.earlier[1:]
		}
		return
	case r.UserPrompt:
		e.users++
		e.requests = append(e.requests, request{text: clip(r.Prompt, 300, true)})
		if len(e.requests) > maxRequests {
			e.requests = e.requests[1:]
			e.dropped++
		}
		e.asked = nil
		e.calls = map[string]string{}
		e.mentions(r.Prompt)
		return
	}
	if r.Role == session.RoleAssistant && !r.Synthetic && strings.TrimSpace(r.Text) != "" {
		t := clip(r.Text, 300, true)
		if n := len(e.requests); n > 0 {
			e.requests[n-1].outcome = t
		}
		e.findings = append(e.findings, t)
		if len(e.findings) > maxFindings {
			e.findings = e.findings[1:]
		}
		e.asked = nil
		for _, q := range questionRe.FindAllString(limit(r.Text, 4000), 3) {
			if q = strings.TrimSpace(q); len(q) > 8 {
				e.asked = append(e.asked, clip(q, 200, true))
			}
		}
		for i := range e.errs {
			if e.errs[i].resolution == "" {
				e.errs[i].resolution = clip(firstSentence(r.Text), 200, true)
			}
		}
		e.mentions(r.Text)
	}
	for _, c := range r.ToolCalls {
		name := strings.ToLower(c.Name)
		in := c.Input
		desc := c.Name
		if shellTools[name] {
			if cmd := commandOf(in); cmd != "" {
				desc = c.Name + " `" + clip(cmd, 120, true) + "`"
				e.addCommand(clip(cmd, 200, true))
			}
		}
		paths := pathsOf(name, in)
		for _, p := range paths {
			e.touch(p, writeTools[name])
		}
		if len(paths) > 0 && !shellTools[name] {
			desc = c.Name + " " + paths[0]
		}
		if len(e.calls) < 1000 {
			e.calls[c.ID] = desc
		}
	}
	for _, t := range r.ToolResults {
		failed := t.IsError
		if !failed {
			if m := exitCodeRe.FindStringSubmatch(limit(t.Output, 2000)); m != nil {
				failed = true
			}
		}
		if !failed {
			// a later success of the same call kind resolves nothing by itself
			continue
		}
		what := e.calls[t.CallID]
		if what == "" {
			what = "a tool call"
		}
		e.errs = append(e.errs, errNote{what: what, err: clip(firstLines(t.Output), 200, true)})
		if len(e.errs) > maxErrors {
			e.errs = e.errs[1:]
		}
	}
}

func (e *extractor) addCommand(c string) {
	for i, old := range e.commands {
		if old == c {
			e.commands = append(e.commands[:i], e.commands[i+1:]...)
			break
		}
	}
	e.commands = append(e.commands, c)
	if len(e.commands) > maxCommands {
		e.commands = e.commands[1:]
	}
}

func (e *extractor) touch(p string, written bool) {
	p = strings.Trim(p, "`'\"")
	if p == "" || len(p) > 300 {
		return
	}
	f := e.file[p]
	if f == nil {
		if len(e.file) >= maxFiles {
			return
		}
		f = &fileInfo{path: p}
		e.file[p] = f
	}
	f.written = f.written || written
	f.mentions++
	f.last = e.seq
}

func (e *extractor) mentions(text string) {
	for _, m := range pathRe.FindAllStringSubmatch(limit(text, 20000), 50) {
		p := strings.TrimRight(m[1], ".")
		if strings.Contains(p, "://") || strings.HasPrefix(p, "www.") {
			continue
		}
		e.touch(p, false)
	}
}

// files returns the most relevant files: written ones first, then by
// mentions, then by recency; at most n.
func (e *extractor) files(n int) []*fileInfo {
	var fs []*fileInfo
	for _, f := range e.file {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].path < fs[j].path })
	// a relative mention of a file also known by a longer path is that file
	merged := map[*fileInfo]bool{}
	for _, f := range fs {
		for _, g := range fs {
			if f != g && !merged[g] && !strings.HasPrefix(f.path, "/") && strings.HasSuffix(g.path, "/"+strings.TrimPrefix(f.path, "./")) {
				g.mentions += f.mentions
				g.last = max(g.last, f.last)
				merged[f] = true
				break
			}
		}
	}
	kept := fs[:0]
	for _, f := range fs {
		if !merged[f] {
			kept = append(kept, f)
		}
	}
	fs = kept
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.written != b.written {
			return a.written
		}
		if a.mentions != b.mentions {
			return a.mentions > b.mentions
		}
		if a.last != b.last {
			return a.last > b.last
		}
		return a.path < b.path
	})
	if len(fs) > n {
		fs = fs[:n]
	}
	return fs
}

// render writes the summary, shortening it until it fits in budget tokens.
func (e *extractor) render(c *tokens.Counter, budget, messages int, note string) string {
	reqs := e.requests
	dropped := e.dropped
	width := 300
	for {
		s := e.renderWith(reqs, dropped, width, messages, note)
		n := c.Count(s)
		if n <= budget {
			return s
		}
		switch {
		case len(reqs) > 1:
			// drop the oldest requests first: a quarter of them while far
			// over the budget, then one at a time
			k := 1
			if n > 2*budget {
				k = max(1, (len(reqs)-1)/4)
			}
			reqs = reqs[k:]
			dropped += k
		case width > 60:
			width /= 2
		default:
			return prefixWithin(c, s, budget-8) + "\n…"
		}
	}
}

func (e *extractor) renderWith(reqs []request, dropped, width, messages int, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Offline summary of the %d earlier messages, made by sessctl compact without a model (extractive).\n", messages)
	if note != "" {
		b.WriteString(note + "\n")
	}
	b.WriteString("\n## Completed work\n")
	for _, s := range e.earlier {
		fmt.Fprintf(&b, "- Earlier summary: %s\n", clip(s, width*2, true))
	}
	if dropped > 0 {
		fmt.Fprintf(&b, "- (%d earlier requests not listed)\n", dropped)
	}
	switch {
	case len(reqs) == 0 && len(e.earlier) == 0:
		b.WriteString("- No user request in the compacted messages.\n")
	case len(reqs) == 1 && len(e.earlier) == 0 && dropped == 0:
		b.WriteString("- Nothing before the last request (below).\n")
	}
	last := len(reqs) - 1
	for i, r := range reqs {
		if i == last {
			break // the last request is what remains
		}
		fmt.Fprintf(&b, "- User asked: %s\n", clip(r.text, width, true))
		if r.outcome != "" {
			fmt.Fprintf(&b, "  Done: %s\n", clip(r.outcome, width, true))
		}
	}

	b.WriteString("\n## What remains\n")
	if last >= 0 {
		r := reqs[last]
		fmt.Fprintf(&b, "- Last request: %s\n", clip(r.text, width, true))
		if r.outcome != "" {
			fmt.Fprintf(&b, "  Last reply: %s\n", clip(r.outcome, width, true))
		} else {
			b.WriteString("  No reply to it yet in the compacted messages.\n")
		}
	} else {
		b.WriteString("- No open request.\n")
	}
	for _, q := range e.asked {
		fmt.Fprintf(&b, "- Unanswered question: %s\n", q)
	}

	b.WriteString("\n## Current state\n")
	files := e.files(5)
	if len(files) > 0 {
		b.WriteString("Files (modified first):\n")
		for _, f := range files {
			how := fmt.Sprintf("mentioned %d×", f.mentions)
			if f.written {
				how = "modified"
			}
			fmt.Fprintf(&b, "- %s (%s)\n", f.path, how)
		}
	}
	if len(e.commands) > 0 {
		b.WriteString("Commands run (oldest first):\n")
		for _, c := range e.commands {
			fmt.Fprintf(&b, "- `%s`\n", clip(c, width/2+20, true))
		}
	}
	if len(e.findings) > 0 {
		b.WriteString("Key findings (the assistant's last messages):\n")
		for _, f := range e.findings {
			fmt.Fprintf(&b, "- %s\n", clip(f, width, true))
		}
	}
	if len(files) == 0 && len(e.commands) == 0 && len(e.findings) == 0 {
		b.WriteString("- Nothing recorded.\n")
	}

	b.WriteString("\n## Notes\n")
	if len(e.errs) == 0 {
		b.WriteString("- No errors met.\n")
	}
	for _, er := range e.errs {
		fmt.Fprintf(&b, "- Error in %s: %s\n", er.what, clip(er.err, width, true))
		if er.resolution != "" {
			fmt.Fprintf(&b, "  Then: %s\n", clip(er.resolution, width, true))
		} else {
			b.WriteString("  Not resolved in the compacted messages.\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// commandOf extracts a shell command from a tool input.
func commandOf(in string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(in), &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd"} {
		raw, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var parts []string
		if json.Unmarshal(raw, &parts) == nil {
			if len(parts) >= 3 && (parts[0] == "bash" || parts[0] == "sh") && parts[1] == "-lc" {
				return parts[2]
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// pathsOf extracts file paths from a tool input.
func pathsOf(name, in string) []string {
	if name == "apply_patch" || strings.Contains(in, "*** Begin Patch") {
		var out []string
		for _, m := range patchRe.FindAllStringSubmatch(limit(in, 200000), 20) {
			p := m[1]
			if p == "" {
				p = m[2]
			}
			out = append(out, strings.TrimSpace(p))
		}
		if len(out) > 0 {
			return out
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(in), &m) != nil {
		return nil
	}
	var out []string
	for _, k := range pathKeys {
		var s string
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	// MultiEdit-style edits lists do not repeat the path; nothing more to do
	return out
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n"); i > 0 {
		s = s[:i]
	}
	for _, sep := range []string{". ", "! ", "? "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i+1]
		}
	}
	return s
}

func firstLines(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.SplitN(limit(s, 4000), "\n", 4)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return strings.Join(lines, " ")
}

// limit cuts s to at most n bytes (for regexps over possibly huge texts).
func limit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// earlierSummary strips the clients' boilerplate around an earlier
// compaction's summary.
func earlierSummary(s string) string {
	s = strings.TrimPrefix(s, KimiSummaryPrefix)
	s = strings.TrimPrefix(s, CodexSummaryPrefix)
	if i := strings.Index(s, "\nSummary:\n"); i >= 0 && strings.HasPrefix(s, "This session is being continued") {
		s = s[i+len("\nSummary:\n"):]
	}
	if i := strings.Index(s, "\n\nIf you need specific details from before compaction"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
