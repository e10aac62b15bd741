package clawdcode

import (
	"bytes"
	"io"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Classify implements usage.Scanner: the transcript records usage in
// message.usage (clawdcode.md §7), and its context is the session's;
// sessctl's rotations of it (<file>.N) are copies. ccusage does not read
// clawdcode.
func (Home) Classify(s *session.Session, f session.File) usage.FileClass {
	return usage.Transcripts(f, 0)
}

// ScanUsage implements usage.Scanner: the sum of message.usage on
// assistant lines.
func (Home) ScanUsage(lr *usage.LineReader, fu *usage.FileUsage) error {
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !bytes.Contains(line, []byte(`"usage"`)) {
			if usage.LooksCorrupt(line, lr.Torn()) {
				fu.Corrupt++
			}
			continue
		}
		var typ, ts, model string
		var in, out int64
		inK, outK := usage.NumMissing, usage.NumMissing
		hasUsage := false
		l := usage.NewLexer(line)
		ok := l.Object(func(k []byte) {
			switch string(k) {
			case "type":
				if l.Peek() == '"' {
					typ = l.Text()
				}
			case "timestamp":
				if l.Peek() == '"' {
					ts = l.Text()
				}
			case "message":
				l.Object(func(m []byte) {
					switch string(m) {
					case "model":
						if l.Peek() == '"' {
							model = l.Text()
						}
					case "usage":
						hasUsage = l.Peek() == '{'
						l.Object(func(u []byte) {
							switch string(u) {
							case "input_tokens":
								in, inK = l.Number()
							case "output_tokens":
								out, outK = l.Number()
							}
						})
					}
				})
			}
		})
		if !l.End() || !ok {
			fu.Corrupt++
			fu.Reject(lr.Num(), "corrupt line (not valid JSON)")
			continue
		}
		if !hasUsage || typ != "assistant" {
			continue
		}
		fu.UsageLines++
		bad := ""
		switch {
		case !inK.OKOrMissing():
			bad = "usage.input_tokens is " + inK.String()
		case !outK.OKOrMissing():
			bad = "usage.output_tokens is " + outK.String()
		case in > usage.MaxRequestTokens || out > usage.MaxRequestTokens:
			bad = "usage is absurdly large"
		}
		if bad != "" {
			fu.Reject(lr.Num(), bad)
			continue
		}
		req := usage.Request{Line: int32(lr.Num()), Counted: true, Usage: session.Usage{Input: in, Output: out}}
		req.Model = fu.ModelID(model)
		if t, err := usage.ParseRFC3339(ts); err == nil {
			req.Time = t
		}
		fu.Add(req, line)
	}
	return nil
}
