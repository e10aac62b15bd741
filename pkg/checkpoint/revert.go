package checkpoint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// Mechanism is how a revert is written.
type Mechanism string

// Revert mechanisms.
const (
	// Auto picks the mechanism of the format (see the package comment).
	Auto Mechanism = "auto"
	// KimiRevertTo is kimi-cli's revert_to(N).
	KimiRevertTo Mechanism = "revert_to"
	// Truncate cuts the file before the turn.
	Truncate Mechanism = "truncate"
	// Rollback appends a Codex thread_rolled_back event.
	Rollback Mechanism = "thread_rolled_back"
)

// ParseMechanism accepts the names of the mechanisms.
func ParseMechanism(s string) (Mechanism, error) {
	switch Mechanism(s) {
	case "", Auto:
		return Auto, nil
	case Truncate, Rollback, KimiRevertTo:
		return Mechanism(s), nil
	case "rollback":
		return Rollback, nil
	}
	return "", fmt.Errorf("unknown revert mechanism %q (auto, truncate, rollback)", s)
}

// claudeKeptAfterCut are the Claude Code record types that a truncating
// revert keeps even after the cut: session metadata whose last occurrence
// wins and that does not belong to any turn (a name the user gave the
// session must survive a revert).
var claudeKeptAfterCut = map[string]bool{
	"custom-title": true, "agent-name": true, "agent-color": true, "pr-link": true,
}

// Plan is a computed revert.
type Plan struct {
	Agent     session.Agent `json:"agent"`
	N         int           `json:"n"`
	Mechanism Mechanism     `json:"mechanism"`
	Point     Point         `json:"point"`
	// Cut is the byte offset the file is cut at (revert_to, truncate), and
	// CutLine the line that starts there (0: the end of the file).
	Cut     int64 `json:"cut"`
	CutLine int   `json:"cut_line"`
	// Removed* describe what leaves the client's history: records cut from
	// the file, or records a rollback hides.
	RemovedRecords int   `json:"removed_records"`
	RemovedBytes   int64 `json:"removed_bytes"`
	RemovedTokens  int64 `json:"removed_tokens_estimate"`
	// KeptAfterCut counts metadata records kept from after the cut (Claude).
	KeptAfterCut int `json:"kept_after_cut,omitempty"`
	// RollbackTurns is num_turns of the appended thread_rolled_back.
	RollbackTurns int `json:"rollback_turns,omitempty"`
	// Kimi holds the details of a Kimi revert.
	Kimi *KimiRevertStats `json:"kimi,omitempty"`
	// Ordinal is the ordinal the appended Codex record gets (-1: none).
	Ordinal int64 `json:"-"`
}

// ErrUnsupported is returned for files of an unknown format.
var ErrUnsupported = errors.New("no checkpoints for this format")

func errUnsupported(a session.Agent) error { return fmt.Errorf("%w (%s)", ErrUnsupported, a) }

// PlanRevert reads the file at path and works out a revert to n.
func PlanRevert(path string, agent session.Agent, n int, mech Mechanism) (*Plan, error) {
	p := &Plan{Agent: agent, N: n, Ordinal: -1}
	if agent == session.Kimi {
		if mech != Auto && mech != KimiRevertTo {
			return nil, fmt.Errorf("kimi sessions are reverted with kimi-cli's own revert_to, not %s", mech)
		}
		p.Mechanism = KimiRevertTo
		f, err := jsonl.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		st, err := KimiRevert(f, io.Discard, int64(n))
		if err != nil {
			return nil, err
		}
		p.Kimi = &st
		p.Cut = st.CutOffset
		p.Point = Point{N: n, Line: st.CutLine, Offset: st.CutOffset, Cut: st.CutOffset, Tokens: st.Tokens}
		return p, p.measure(path, st.CutOffset)
	}
	f, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	l, err := List(f, agent)
	f.Close()
	if err != nil {
		return nil, err
	}
	pt := l.Find(n)
	if pt == nil {
		switch l.Live {
		case 0:
			return nil, fmt.Errorf("%w %d: the session has no user turns", ErrNoCheckpoint, n)
		case 1:
			return nil, fmt.Errorf("%w %d: the session has 1 user turn (0)", ErrNoCheckpoint, n)
		}
		return nil, fmt.Errorf("%w %d: the session has %d user turns (0 to %d)", ErrNoCheckpoint, n, l.Live, l.Live-1)
	}
	p.Point = *pt
	p.Cut = pt.Cut
	switch {
	case agent == session.Codex && (mech == Rollback || mech == Auto && !pt.CompactedAfter):
		if pt.CompactedAfter {
			return nil, fmt.Errorf("turn %d is followed by a compaction; a rollback would count turns in the compacted history (use --mechanism truncate)", n)
		}
		p.Mechanism = Rollback
		p.RollbackTurns = l.Live - n
		p.Ordinal = l.Ordinal
	case mech == Rollback:
		return nil, fmt.Errorf("only codex sessions can be rolled back with thread_rolled_back")
	case mech == Auto || mech == Truncate:
		p.Mechanism = Truncate
	default:
		return nil, fmt.Errorf("%s sessions cannot be reverted with %s", agent, mech)
	}
	return p, p.measure(path, pt.Cut)
}

// measure counts what leaves the history from offset cut on.
func (p *Plan) measure(path string, cut int64) error {
	return session.ReadFile(path, session.FormatFor(p.Agent), func(r *session.Record) error {
		if r.Line.Offset < cut {
			return nil
		}
		if p.CutLine == 0 {
			p.CutLine = r.Line.Num
		}
		if r.Kind == session.KindBlank {
			return nil
		}
		if p.Mechanism == Truncate && p.Agent == session.Claude && claudeKeptAfterCut[r.Type] {
			p.KeptAfterCut++
			return nil
		}
		if p.Mechanism == Rollback && r.Kind != session.KindMessage {
			return nil // only the model-visible items leave the history
		}
		p.RemovedRecords++
		p.RemovedBytes += r.Line.End() - r.Line.Offset
		p.RemovedTokens += int64(tokens.CodexApprox(recordText(r)))
		return nil
	})
}

func recordText(r *session.Record) string {
	if len(r.ToolCalls) == 0 && len(r.ToolResults) == 0 {
		return r.Text + r.Thinking
	}
	var b bytes.Buffer
	b.WriteString(r.Text)
	b.WriteString(r.Thinking)
	for _, c := range r.ToolCalls {
		b.WriteString(c.Name)
		b.WriteString(c.Input)
	}
	for _, res := range r.ToolResults {
		if r.Text != res.Output {
			b.WriteString(res.Output)
		}
	}
	return b.String()
}

// Write streams the reverted file: src is the original, dst the new file.
func (p *Plan) Write(src io.Reader, dst io.Writer, now time.Time) error {
	switch p.Mechanism {
	case KimiRevertTo:
		_, err := KimiRevert(src, dst, int64(p.N))
		return err
	case Truncate:
		return p.truncate(src, dst)
	case Rollback:
		return p.appendRollback(src, dst, now)
	}
	return fmt.Errorf("unknown mechanism %q", p.Mechanism)
}

func (p *Plan) truncate(src io.Reader, dst io.Writer) error {
	br := bufio.NewReaderSize(src, 64<<10)
	if _, err := io.CopyN(dst, br, p.Cut); err != nil {
		return fmt.Errorf("copying the kept part: %w", err)
	}
	if p.Agent != session.Claude {
		return nil
	}
	f := session.FormatFor(p.Agent)
	rd := jsonl.NewReader(br)
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rec := session.Decode(f, l)
		if !claudeKeptAfterCut[rec.Type] {
			continue
		}
		if _, err := dst.Write(l.Raw); err != nil {
			return err
		}
		if _, err := dst.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
}

// RollbackLine is the Codex record that rolls back k turns, serialised the
// way Codex 0.169 writes its envelope (ordinal only when the file has them).
func RollbackLine(now time.Time, ordinal int64, k int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"timestamp":"`)
	b.WriteString(now.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteString(`",`)
	if ordinal >= 0 {
		b.WriteString(`"ordinal":`)
		b.WriteString(strconv.FormatInt(ordinal, 10))
		b.WriteString(`,`)
	}
	b.WriteString(`"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":`)
	b.WriteString(strconv.Itoa(k))
	b.WriteString(`}}`)
	return b.Bytes()
}

func (p *Plan) appendRollback(src io.Reader, dst io.Writer, now time.Time) error {
	var last [1]byte
	n, err := io.Copy(dst, &lastByte{r: src, last: &last})
	if err != nil {
		return err
	}
	if n > 0 && last[0] != '\n' {
		// a torn last line stays isolated, as Codex itself does
		if _, err := dst.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	ord := int64(-1)
	if p.Ordinal >= 0 {
		ord = p.Ordinal + 1
	}
	line := append(RollbackLine(now, ord, p.RollbackTurns), '\n')
	_, err = dst.Write(line)
	return err
}

type lastByte struct {
	r    io.Reader
	last *[1]byte
}

func (l *lastByte) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	if n > 0 {
		l.last[0] = b[n-1]
	}
	return n, err
}

// codexOrdinal reads the envelope's ordinal from the start of a line.
func codexOrdinal(raw []byte) (int64, bool) {
	head := raw
	if len(head) > 120 {
		head = head[:120]
	}
	i := bytes.Index(head, []byte(`,"ordinal":`))
	if i < 0 {
		return 0, false
	}
	rest := raw[i+len(`,"ordinal":`):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v, err == nil
}
