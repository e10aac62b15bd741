package kimicode

import (
	"bytes"
	"io"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Kimi Code records the usage of every model response once, in a
// usage.record line of the wire of the agent that made the request
// (kimi-code.md §6): inputOther (input that was neither read from nor
// written to the cache), output, inputCacheRead, inputCacheCreation. The
// record names the model by its alias in the user's configuration; the
// llm.request line just before it names the provider's model id, which is
// what sessctl reports when the aliases agree. step.end events repeat the
// same usage for the context gauge and are never summed.

// Classify implements usage.Scanner: every agent's wire records usage;
// the main agent's records the session's context (token_counting) and
// window (llm.request maxTokens). ccusage does not read Kimi Code.
func (Home) Classify(s *session.Session, f session.File) usage.FileClass {
	return usage.Transcripts(f, 0)
}

// WhereUsage implements usage.Explainer.
func (Home) WhereUsage() string {
	return "Kimi Code records each response's usage once, in a usage.record line of the wire"
}

var (
	usageMarker = []byte(`"usage.record"`)
	llmMarker   = []byte(`"llm.request"`)
	countMarker = []byte(`"token_counting.`)
)

// ScanUsage implements usage.Scanner.
func (Home) ScanUsage(lr *usage.LineReader, fu *usage.FileUsage) error {
	var alias, modelID string // of the newest llm.request
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		isUsage, isLLM, isCount := bytes.Contains(line, usageMarker), bytes.Contains(line, llmMarker), bytes.Contains(line, countMarker)
		if !isUsage && !isLLM && !isCount {
			if usage.LooksCorrupt(line, lr.Torn()) {
				fu.Corrupt++
			}
			continue
		}
		var typ, model, mAlias string
		var tm, maxTokens, tokens int64
		var u [4]int64
		hasUsage, bad := false, ""
		l := usage.NewLexer(line)
		ok := l.Object(func(k []byte) {
			switch string(k) {
			case "type":
				if l.Peek() == '"' {
					typ = l.Text()
				}
			case "model":
				if l.Peek() == '"' {
					model = l.Text()
				}
			case "modelAlias":
				if l.Peek() == '"' {
					mAlias = l.Text()
				}
			case "time":
				if v, kind := l.Number(); kind == usage.NumOK {
					tm = v
				}
			case "maxTokens":
				if v, kind := l.Number(); kind == usage.NumOK {
					maxTokens = v
				}
			case "tokens":
				if v, kind := l.Number(); kind == usage.NumOK {
					tokens = v
				}
			case "usage":
				hasUsage = l.Peek() == '{'
				l.Object(func(f []byte) {
					i := -1
					switch string(f) {
					case "inputOther":
						i = 0
					case "output":
						i = 1
					case "inputCacheRead":
						i = 2
					case "inputCacheCreation":
						i = 3
					default:
						return
					}
					v, kind := l.Number()
					switch {
					case kind == usage.NumNull || kind == usage.NumMissing:
					case kind != usage.NumOK:
						bad = "usage." + string(f) + " is " + kind.String()
					case v > usage.MaxRequestTokens:
						bad = "usage." + string(f) + " is absurdly large"
					default:
						u[i] = v
					}
				})
			}
		})
		if !l.End() || !ok {
			fu.Corrupt++
			if isUsage {
				fu.Reject(lr.Num(), "corrupt usage.record line (not valid JSON)")
			}
			continue
		}
		switch {
		case typ == "llm.request":
			alias, modelID = mAlias, model
			if maxTokens > 0 {
				fu.Window = maxTokens
			}
		case len(typ) > len("token_counting.") && typ[:len("token_counting.")] == "token_counting.":
			if tokens > 0 {
				fu.Context, fu.ContextSource = tokens, "wire.jsonl "+typ+".tokens"
			}
		case typ == "usage.record" && hasUsage:
			fu.UsageLines++
			if bad != "" {
				fu.Reject(lr.Num(), bad)
				continue
			}
			req := usage.Request{Line: int32(lr.Num()), Counted: true, Time: tm,
				Usage: session.Usage{Input: u[0], Output: u[1], CacheRead: u[2], CacheCreation: u[3]}}
			name := model
			if modelID != "" && (alias == model || model == "") {
				name = modelID
			}
			req.Model = fu.ModelID(name)
			fu.Add(req, line)
		}
	}
	return nil
}
