package checkpoint

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// Mechanism is how a revert is written.
type Mechanism string

// Revert mechanisms.
const (
	// Auto picks the agent's own mechanism.
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

// Reverter is how an agent's session files are reverted. Each home that
// can revert implements it.
type Reverter interface {
	// PlanRevert completes p for the file at path: p.Agent, p.N and
	// p.Mechanism (as asked, Auto for the agent's choice) are set; turns
	// lists the file's turns (a pass over the file, so a home that finds
	// its cut otherwise does not call it). It sets the mechanism, the point, the cut and
	// what leaves the history (MeasureCut does that for a cut), and
	// refuses a mechanism the agent cannot use.
	PlanRevert(ctx context.Context, path string, p *Plan, turns func() ([]session.Turn, error)) error
	// WriteRevert streams the reverted file: src is the original, dst the
	// new file.
	WriteRevert(p *Plan, src io.Reader, dst io.Writer, now time.Time) error
}

// Plan is a computed revert.
type Plan struct {
	Agent     session.Agent `json:"agent"`
	N         int           `json:"n"`
	Mechanism Mechanism     `json:"mechanism"`
	Point     Point         `json:"point"`
	// Unit is what N counts: "turn", or "checkpoint" (Kimi).
	Unit string `json:"unit"`
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
	// kept are the lines after the cut that stay (Keep), in file order,
	// found when the revert was planned: WriteCut copies them by place
	// without reading the rest of what it cuts.
	kept          []span
	keptAfterSize int64 // their bytes, each with a newline
	// RollbackTurns is num_turns of the appended thread_rolled_back.
	RollbackTurns int `json:"rollback_turns,omitempty"`
	// Copied holds the details of a revert that copies the kept records
	// into a new file instead of cutting it (kimi-cli's revert_to). Its
	// JSON name stays "kimi", the name it has always had in --json.
	Copied *CopyRevertStats `json:"kimi,omitempty"`
	// Ordinal is the ordinal the appended Codex record gets (-1: none).
	Ordinal int64 `json:"-"`
	// Appended is the line a revert appends (Codex's rollback), without
	// its newline.
	Appended []byte `json:"-"`
	// Warnings are what the user should know about this revert.
	Warnings []string `json:"warnings,omitempty"`
}

// CopyRevertStats describes what a copying revert (kimi-cli's revert_to(N))
// keeps and drops.
type CopyRevertStats struct {
	// Found is set when a line {"role": "_checkpoint", "id": N} exists (the
	// cut); CutLine is its 1-based line number (Python's line splitting) and
	// CutOffset its byte offset.
	Found     bool  `json:"found"`
	CutLine   int   `json:"cut_line"`
	CutOffset int64 `json:"cut_offset"`
	// NextID is the next checkpoint id Kimi would hold after restoring the
	// whole file (last integer _checkpoint id + 1); revert_to(N) fails when
	// N >= NextID.
	NextID int64 `json:"next_id"`
	// Kept is the number of lines written to the new file; KeptBytes their size.
	Kept      int   `json:"kept"`
	KeptBytes int64 `json:"kept_bytes"`
	// Dropped counts the lines before the cut that Kimi does not copy
	// (invalid JSON, not an object, records that fail validation); Blank
	// counts blank lines before the cut. Both survive only in the rotation.
	Dropped int `json:"dropped"`
	Blank   int `json:"blank"`
	// Removed is the number of non-blank lines from the cut to the end.
	Removed      int   `json:"removed"`
	RemovedBytes int64 `json:"removed_bytes"`
	// Tokens is the last valid _usage token_count before the cut (-1: none).
	Tokens int64 `json:"tokens"`
	// Normalised counts kept lines whose bytes changed on the way (invalid
	// UTF-8 replaced by U+FFFD, \r\n or \r line ends turned into \n).
	Normalised int `json:"normalised"`
}

// ErrNoCheckpoint is returned when N is not a checkpoint or turn of the
// file.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// ErrUnsupported is returned for files of an agent that cannot be
// reverted.
var ErrUnsupported = errors.New("no checkpoints for this format")

func errUnsupported(a session.Agent) error { return fmt.Errorf("%w (%s)", ErrUnsupported, a) }

// PlanRevert reads the file at path and works out a revert to n.
func PlanRevert(ctx context.Context, path string, agent session.Agent, n int, mech Mechanism) (*Plan, error) {
	rv, ok := session.As[Reverter](agent)
	conv, ok2 := session.As[session.Conversation](agent)
	if !ok || !ok2 {
		return nil, errUnsupported(agent)
	}
	p := &Plan{Agent: agent, N: n, Mechanism: mech, Unit: conv.TurnUnit(), Ordinal: -1}
	turns := func() ([]session.Turn, error) { return conv.Turns(ctx, path) }
	if err := rv.PlanRevert(ctx, path, p, turns); err != nil {
		return nil, err
	}
	return p, nil
}

// PlanCut plans a revert as a plain cut before turn p.N: for the homes
// whose client replays the file in order, so that what is before the
// turn's first line is the history before the turn (clawdcode, Kimi
// Code). Their WriteRevert is WriteCut with no extra lines.
func PlanCut(ctx context.Context, a session.Agent, path string, p *Plan, listTurns func() ([]session.Turn, error)) error {
	turns, err := listTurns()
	if err != nil {
		return err
	}
	t, err := FindTurn(turns, p.N, p.Unit)
	if err != nil {
		return err
	}
	if err := OnlyTruncate(a, p.Mechanism); err != nil {
		return err
	}
	return MeasureCut(ctx, path, p, t, nil)
}

// OnlyTruncate is the mechanism check of an agent whose files are only
// ever reverted by a cut.
func OnlyTruncate(a session.Agent, m Mechanism) error {
	switch m {
	case Auto, Truncate:
		return nil
	case Rollback:
		return fmt.Errorf("only codex sessions can be rolled back with thread_rolled_back")
	}
	return fmt.Errorf("%s sessions cannot be reverted with %s", a, m)
}

// PointOf makes the Point of a turn (without the figures List adds).
func PointOf(t *session.Turn) Point {
	p := Point{N: t.N, Line: t.Line, Offset: t.Offset, Cut: t.Cut, Tokens: -1, Preview: t.Prompt, UUID: t.UUID,
		State: t.State, RolledBack: t.State == session.RolledBack, CompactedAfter: t.CompactedAfter}
	if !t.Timestamp.IsZero() {
		ts := t.Timestamp
		p.Timestamp = &ts
	}
	return p
}

// Write streams the reverted file: src is the original, dst the new file.
func (p *Plan) Write(src io.Reader, dst io.Writer, now time.Time) error {
	rv, ok := session.As[Reverter](p.Agent)
	if !ok {
		return errUnsupported(p.Agent)
	}
	return rv.WriteRevert(p, src, dst, now)
}

// NewSize predicts the size of the reverted file from the original's.
func (p *Plan) NewSize(old int64) int64 {
	switch {
	case p.Copied != nil:
		return p.Copied.KeptBytes
	case p.Appended != nil:
		return old + int64(len(p.Appended)) + 1
	}
	return p.Cut + p.keptAfterSize
}

// Keep says which records after a cut stay in the file anyway (session
// metadata that belongs to no turn). A nil *Keep keeps none.
type Keep struct {
	// Each keeps every record it says.
	Each func(r *session.Record) bool
	// Newest keeps the newest of the records it says, only (Claude's
	// cost-state, the session's spend ledger: the last one wins).
	Newest func(r *session.Record) bool
}

// span is a line of the file: where it starts and its bytes without the
// terminator.
type span struct{ off, n int64 }

// removal is what one record adds to what a revert removes.
type removal struct {
	bytes, tokens int64
}

func removalOf(r *session.Record) removal {
	return removal{r.Line.End() - r.Line.Offset, int64(tokens.CodexApprox(recordText(r)))}
}

func (p *Plan) remove(m removal) {
	p.RemovedRecords++
	p.RemovedBytes += m.bytes
	p.RemovedTokens += m.tokens
}

// MeasureCut sets the cut of p at the start of turn t and counts what
// leaves the file from there on; keep says which records stay. It reads
// the file from the cut on only, and decodes only that: the part before
// the cut was read once already, when the cut was found (t.CutLine says
// which line starts there; without it, the lines before the cut are
// counted through).
func MeasureCut(ctx context.Context, path string, p *Plan, t *session.Turn, keep *Keep) error {
	p.Mechanism = Truncate
	p.Point = PointOf(t)
	p.Cut = t.Cut
	var (
		newest     *span // the newest record keep.Newest says, so far
		newestCost removal
	)
	err := measure(ctx, path, p, t.CutLine, func(r *session.Record) bool {
		if keep == nil {
			return true
		}
		if keep.Each != nil && keep.Each(r) {
			p.kept = append(p.kept, span{r.Line.Offset, int64(len(r.Line.Raw))})
			return false
		}
		if keep.Newest != nil && keep.Newest(r) {
			if newest != nil {
				p.remove(newestCost) // an older one: it goes
			}
			newest, newestCost = &span{r.Line.Offset, int64(len(r.Line.Raw))}, removalOf(r)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if newest != nil {
		i, _ := slices.BinarySearchFunc(p.kept, newest.off, func(s span, off int64) int { return cmp.Compare(s.off, off) })
		p.kept = slices.Insert(p.kept, i, *newest)
	}
	p.KeptAfterCut = len(p.kept)
	for _, k := range p.kept {
		p.keptAfterSize += k.n + 1
	}
	return nil
}

// MeasureRemoved counts every record from p.Cut on: what a rewrite of the
// file that ends there leaves out.
func MeasureRemoved(ctx context.Context, path string, p *Plan) error {
	return measure(ctx, path, p, 0, func(*session.Record) bool { return true })
}

// MeasureHidden counts the model-visible records from offset from on,
// which a rollback hides without removing them.
func MeasureHidden(ctx context.Context, path string, p *Plan, from int64) error {
	saved := p.Cut
	p.Cut = from
	err := measure(ctx, path, p, 0, func(r *session.Record) bool { return r.Kind == session.KindMessage })
	p.Cut = saved
	return err
}

// measure counts the records from p.Cut on that removed says leave. It
// decodes only those: the part before the cut was decoded once already,
// when the cut was found. line is the number of the line that starts at
// the cut, 0 when not known.
func measure(ctx context.Context, path string, p *Plan, line int, removed func(*session.Record) bool) error {
	return session.ReadFileAt(ctx, path, session.HomeOf(p.Agent), p.Cut, line, func(r *session.Record) error {
		if r.Line.Offset < p.Cut {
			return nil
		}
		if p.CutLine == 0 {
			p.CutLine = r.Line.Num
		}
		if r.Kind == session.KindBlank || !removed(r) {
			return nil
		}
		p.remove(removalOf(r))
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

// copyBuffer is the size of WriteCut's reads and writes.
const copyBuffer = 1 << 20

// WriteCut copies src up to p.Cut into dst, then the whole lines after it
// that the plan keeps (MeasureCut's Keep), each followed by "\n". Those
// are read by place when src is an io.ReaderAt (rewrite's original of a
// plain file), so the part cut off is not read again; otherwise src is
// read on up to the last of them.
func WriteCut(p *Plan, src io.Reader, dst io.Writer) error {
	// in large reads: the part kept is most of a big file
	n, err := io.CopyBuffer(dst, io.LimitReader(src, p.Cut), make([]byte, copyBuffer))
	if err == nil && n < p.Cut {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("copying the kept part: %w", err)
	}
	at, random := src.(io.ReaderAt)
	pos := p.Cut // where src is
	for _, k := range p.kept {
		line := make([]byte, k.n, k.n+1)
		var err error
		if random {
			_, err = at.ReadAt(line, k.off)
		} else {
			if _, err = io.CopyN(io.Discard, src, k.off-pos); err == nil {
				_, err = io.ReadFull(src, line)
			}
			pos = k.off + k.n
		}
		if err != nil {
			return fmt.Errorf("copying a line kept after the cut: %w", err)
		}
		if _, err := dst.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// WriteAppend copies src whole into dst and appends line and a newline; a
// last line without its newline gets one first, so it stays apart.
func WriteAppend(src io.Reader, dst io.Writer, line []byte) error {
	var last [1]byte
	n, err := io.Copy(dst, &lastByte{r: src, last: &last})
	if err != nil {
		return err
	}
	if n > 0 && last[0] != '\n' {
		if _, err := dst.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	_, err = dst.Write(append(line[:len(line):len(line)], '\n'))
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
