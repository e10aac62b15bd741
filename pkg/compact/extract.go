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
// each, the files touched, the commands run, the errors met, and the
// summaries of earlier compactions whole. Its memory is bounded whatever the
// length of the session: it is fed digests (see digest), not messages.
type extractor struct {
	seq      int
	requests []request // the most recent maxRequests
	dropped  int       // older requests not kept
	earlier  []string  // summaries of earlier compactions, whole
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
	maxEarlier  = 3
	// maxEarlierBytes bounds one earlier summary held in memory.
	maxEarlierBytes = 256 << 10
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

// digest is what the extractor needs of one message, computed when the
// message is read: small whatever the message's size, so that the recent
// messages (which may yet be kept rather than summarised) can wait in
// memory cheaply.
type digest struct {
	earlier  string // an earlier compaction's summary, whole (bounded)
	summary  bool
	isPrompt bool
	prompt   string // a user request, clipped
	reply    string // the assistant's words, clipped ("" when none)
	sentence string // their first sentence
	asked    []string
	mentions []string // paths mentioned in the prompt or the reply
	calls    []callDigest
	fails    []failDigest
}

type callDigest struct {
	id, desc, command string
	paths             []string
	written           bool
}

type failDigest struct {
	callID, err string
}

// digestOf digests a live message; earlier strips the client's words
// around an earlier compaction's summary.
func digestOf(m *session.Message, earlier func(string) string) *digest {
	d := &digest{}
	switch {
	case m.Summary:
		d.summary = true
		d.earlier = limit(strings.TrimSpace(earlier(m.Text)), maxEarlierBytes)
		return d
	case m.Prompt:
		d.isPrompt = true
		d.prompt = clip(m.Text, 300, true)
		d.mentions = mentionsIn(m.Text)
		return d
	}
	if m.Role == session.RoleAssistant && !m.Injected && strings.TrimSpace(m.Text) != "" {
		d.reply = clip(m.Text, 300, true)
		d.sentence = clip(firstSentence(m.Text), 200, true)
		for _, q := range questionRe.FindAllString(limit(m.Text, 4000), 3) {
			if q = strings.TrimSpace(q); len(q) > 8 {
				d.asked = append(d.asked, clip(q, 200, true))
			}
		}
		d.mentions = mentionsIn(m.Text)
	}
	for _, c := range m.ToolCalls {
		name := strings.ToLower(c.Name)
		cd := callDigest{id: c.ID, desc: c.Name, written: writeTools[name]}
		if shellTools[name] {
			if cmd := commandOf(c.Input); cmd != "" {
				cd.desc = c.Name + " `" + clip(cmd, 120, true) + "`"
				cd.command = clip(cmd, 200, true)
			}
		}
		cd.paths = pathsOf(name, c.Input)
		if len(cd.paths) > 0 && !shellTools[name] {
			cd.desc = c.Name + " " + cd.paths[0]
		}
		d.calls = append(d.calls, cd)
	}
	for _, t := range m.ToolResults {
		failed := t.IsError
		if !failed && exitCodeRe.MatchString(limit(t.Output, 2000)) {
			failed = true
		}
		if failed {
			d.fails = append(d.fails, failDigest{callID: t.CallID, err: clip(firstLines(t.Output), 200, true)})
		}
	}
	return d
}

func mentionsIn(text string) []string {
	var out []string
	for _, m := range pathRe.FindAllStringSubmatch(limit(text, 20000), 50) {
		p := strings.TrimRight(m[1], ".")
		if strings.Contains(p, "://") || strings.HasPrefix(p, "www.") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// add feeds one compacted message's digest to the extractor.
func (e *extractor) add(d *digest) {
	e.seq++
	switch {
	case d.summary:
		if d.earlier != "" {
			e.earlier = append(e.earlier, d.earlier)
			if len(e.earlier) > maxEarlier {
				e.earlier = e.earlier[1:]
			}
		}
		return
	case d.isPrompt:
		e.users++
		e.requests = append(e.requests, request{text: d.prompt})
		if len(e.requests) > maxRequests {
			e.requests = e.requests[1:]
			e.dropped++
		}
		e.asked = nil
		e.calls = map[string]string{}
		for _, p := range d.mentions {
			e.touch(p, false)
		}
		return
	}
	if d.reply != "" {
		if n := len(e.requests); n > 0 {
			e.requests[n-1].outcome = d.reply
		}
		e.findings = append(e.findings, d.reply)
		if len(e.findings) > maxFindings {
			e.findings = e.findings[1:]
		}
		e.asked = d.asked
		for i := range e.errs {
			if e.errs[i].resolution == "" {
				e.errs[i].resolution = d.sentence
			}
		}
		for _, p := range d.mentions {
			e.touch(p, false)
		}
	}
	for _, c := range d.calls {
		if c.command != "" {
			e.addCommand(c.command)
		}
		for _, p := range c.paths {
			e.touch(p, c.written)
		}
		if len(e.calls) < 1000 {
			e.calls[c.id] = c.desc
		}
	}
	for _, f := range d.fails {
		what := e.calls[f.callID]
		if what == "" {
			what = "a tool call"
		}
		e.errs = append(e.errs, errNote{what: what, err: f.err})
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

// view is what one rendering of the summary shows; render shrinks it until
// the summary fits the budget.
type view struct {
	reqs     []request
	dropped  int
	width    int
	findings []string
	commands []string
	errs     []errNote
	earlier  []string
	// cut says that the (only) earlier summary left was shortened
	cut bool
}

// render writes the summary, shortening it until it fits in budget tokens.
// What goes first is what matters least: the oldest requests, then the
// length of the quotes, then the older findings, commands and errors, then
// older earlier summaries; an earlier summary is kept whole as long as it
// fits, and only then loses its middle (its head and its end, where the
// pending work is, stay).
func (e *extractor) render(c *tokens.Counter, budget, messages int, note string) string {
	v := view{reqs: e.requests, dropped: e.dropped, width: 300, findings: e.findings, commands: e.commands,
		errs: e.errs, earlier: e.earlier}
	for {
		s := e.renderWith(&v, messages, note)
		n := c.Count(s)
		if n <= budget {
			return s
		}
		switch {
		case len(v.reqs) > 1:
			// drop the oldest requests first: a quarter of them while far
			// over the budget, then one at a time
			k := 1
			if n > 2*budget {
				k = max(1, (len(v.reqs)-1)/4)
			}
			v.reqs = v.reqs[k:]
			v.dropped += k
		case v.width > 60:
			v.width /= 2
		case len(v.findings) > 1:
			v.findings = v.findings[1:]
		case len(v.commands) > 3:
			v.commands = v.commands[1:]
		case len(v.errs) > 2:
			v.errs = v.errs[1:]
		case len(v.earlier) > 1:
			v.earlier = v.earlier[1:]
		case len(v.earlier) == 1 && !v.cut:
			// the rest without the earlier summary, and what is left for it
			v.earlier = nil
			rest := c.Count(e.renderWith(&v, messages, note))
			room := budget - rest - 40
			v.earlier = e.earlier[len(e.earlier)-1:]
			if room < 50 {
				v.earlier = nil
				continue
			}
			v.earlier = []string{middleWithin(c, v.earlier[0], room)}
			v.cut = true
		default:
			return prefixWithin(c, s, budget-8) + "\n…"
		}
	}
}

// middleWithin shortens s to at most n tokens by cutting out its middle.
func middleWithin(c *tokens.Counter, s string, n int) string {
	t := &truncator{count: c, max: n}
	out, _ := t.shorten(s)
	return out
}

func (e *extractor) renderWith(v *view, messages int, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Offline summary of the %d earlier messages, made by sessctl compact without a model (extractive).\n", messages)
	if note != "" {
		b.WriteString(note + "\n")
	}
	for i, s := range v.earlier {
		b.WriteString("\n## Earlier summary")
		if len(v.earlier) > 1 {
			fmt.Fprintf(&b, " (%d of %d)", i+1, len(v.earlier))
		}
		b.WriteString("\n")
		b.WriteString(s)
		b.WriteString("\n")
	}
	b.WriteString("\n## Completed work\n")
	if v.dropped > 0 {
		fmt.Fprintf(&b, "- (%d earlier requests not listed)\n", v.dropped)
	}
	switch {
	case len(v.reqs) == 0 && len(v.earlier) == 0:
		b.WriteString("- No user request in the compacted messages.\n")
	case len(v.reqs) == 0:
		b.WriteString("- See the earlier summary.\n")
	case len(v.reqs) == 1 && v.dropped == 0:
		b.WriteString("- Nothing before the last request (below).\n")
	}
	last := len(v.reqs) - 1
	for i, r := range v.reqs {
		if i == last {
			break // the last request is what remains
		}
		fmt.Fprintf(&b, "- User asked: %s\n", clip(r.text, v.width, true))
		if r.outcome != "" {
			fmt.Fprintf(&b, "  Done: %s\n", clip(r.outcome, v.width, true))
		}
	}

	b.WriteString("\n## What remains\n")
	if last >= 0 {
		r := v.reqs[last]
		fmt.Fprintf(&b, "- Last request: %s\n", clip(r.text, v.width, true))
		if r.outcome != "" {
			fmt.Fprintf(&b, "  Last reply: %s\n", clip(r.outcome, v.width, true))
		} else {
			b.WriteString("  No reply to it yet in the compacted messages.\n")
		}
	} else if len(v.earlier) > 0 {
		b.WriteString("- See the earlier summary.\n")
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
	if len(v.commands) > 0 {
		b.WriteString("Commands run (oldest first):\n")
		for _, c := range v.commands {
			fmt.Fprintf(&b, "- `%s`\n", clip(c, v.width/2+20, true))
		}
	}
	if len(v.findings) > 0 {
		b.WriteString("Key findings (the assistant's last messages):\n")
		for _, f := range v.findings {
			fmt.Fprintf(&b, "- %s\n", clip(f, v.width, true))
		}
	}
	if len(files) == 0 && len(v.commands) == 0 && len(v.findings) == 0 {
		b.WriteString("- Nothing recorded.\n")
	}

	b.WriteString("\n## Notes\n")
	if len(v.errs) == 0 {
		b.WriteString("- No errors met.\n")
	}
	for _, er := range v.errs {
		fmt.Fprintf(&b, "- Error in %s: %s\n", er.what, clip(er.err, v.width, true))
		if er.resolution != "" {
			fmt.Fprintf(&b, "  Then: %s\n", clip(er.resolution, v.width, true))
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
