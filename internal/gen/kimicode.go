package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// genKimiCode writes a Kimi Code home: sessions/wd_<project>/session_<id>/
// agents/main/wire.jsonl, in the records Kimi Code 2.1.0 writes
// (docs/formats/kimi-code.md §3): per turn a turn.prompt and the prompt's
// context.append_message (now and then with an injected reminder), then
// steps of streamed content.part text and thinking, Bash tool calls with
// large results, step.end and usage.record; now and then a context.undo of
// the last turn, and a context.apply_compaction that keeps the user's
// prompts.
func genKimiCode(opt options, stdout io.Writer) error {
	base := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	var written int64
	per := opt.size / int64(opt.files)
	for i := 0; i < opt.files; i++ {
		g := newRNG(opt.seed, uint64(300+i))
		t := base.Add(time.Duration(i) * 5 * time.Hour)
		lf, err := createLines(filepath.Join(opt.out, "sessions", fmt.Sprintf("wd_proj%d_%s", i%4, g.hexID(12)), "session_"+g.uuid(), "agents", "main", "wire.jsonl"))
		if err != nil {
			return err
		}
		put := lf.put
		now := func() int64 {
			t = t.Add(time.Duration(50+g.IntN(3000)) * time.Millisecond)
			return t.UnixMilli()
		}
		event := func(ev string) {
			put(fmt.Sprintf(`{"type":"context.append_loop_event","agentId":"main","event":%s,"time":%d}`, ev, now()))
		}
		put(fmt.Sprintf(`{"type":"metadata","protocol_version":"1.5","created_at":%d}`, now()))
		put(fmt.Sprintf(`{"type":"permission.set_mode","agentId":"main","mode":"auto","time":%d}`, now()))
		target := per/2 + int64(g.IntN(int(per)+1))
		for turn := 0; lf.n < target; turn++ {
			pid := "msg_" + g.hexID(26)
			prompt := jstr(g.text(20 + g.IntN(600)))
			put(fmt.Sprintf(`{"type":"turn.prompt","agentId":"main","input":[{"type":"text","text":%s}],"origin":{"kind":"user"},"promptId":"%s","turnId":%d,"time":%d}`, prompt, pid, turn, now()))
			put(fmt.Sprintf(`{"type":"context.append_message","agentId":"main","message":{"role":"user","content":[{"type":"text","text":%s}],"id":"%s","toolCalls":[],"origin":{"kind":"user"}},"time":%d}`, prompt, pid, now()))
			if g.IntN(4) == 0 {
				put(fmt.Sprintf(`{"type":"context.append_message","agentId":"main","message":{"role":"user","content":[{"type":"text","text":%s}],"toolCalls":[],"origin":{"kind":"injection","variant":"date","ownerPromptId":"%s"}},"time":%d}`,
					jstr("<system-reminder>\n"+g.text(120)+"\n</system-reminder>"), pid, now()))
			}
			steps := 1 + g.IntN(4)
			for s := 1; s <= steps; s++ {
				step := g.uuid()
				event(fmt.Sprintf(`{"type":"step.begin","uuid":"%s","turnId":"%d","step":%d}`, step, turn, s))
				if g.IntN(3) == 0 {
					event(fmt.Sprintf(`{"type":"content.part","uuid":"%s","turnId":"%d","step":%d,"stepUuid":"%s","part":{"type":"think","think":%s}}`, g.uuid(), turn, s, step, jstr(g.text(100+g.IntN(800)))))
				}
				for p := 0; p < 1+g.IntN(5); p++ {
					event(fmt.Sprintf(`{"type":"content.part","uuid":"%s","turnId":"%d","step":%d,"stepUuid":"%s","part":{"type":"text","text":%s}}`, g.uuid(), turn, s, step, jstr(g.text(20+g.IntN(300)))))
				}
				finish := "end_turn"
				if s < steps {
					finish = "tool_use"
					call, callUUID := "call_"+g.hexID(24), g.uuid()
					cmd := "cat f" + g.hexID(6)
					event(fmt.Sprintf(`{"type":"tool.call","uuid":"%s","turnId":"%d","step":%d,"stepUuid":"%s","toolCallId":"%s","name":"Bash","args":{"command":"%s"},"display":{"kind":"command","command":"%s","cwd":"/home/dev/proj","language":"bash"}}`,
						callUUID, turn, s, step, call, cmd, cmd))
					event(fmt.Sprintf(`{"type":"tool.result","parentUuid":"%s","toolCallId":"%s","result":{"output":%s,"durationMs":%d}}`,
						callUUID, call, jstr(g.text(200+g.IntN(g.IntN(30000)+1))), 5+g.IntN(4000)))
				}
				in, cached, out := 2000+g.IntN(30000), g.IntN(20000), 10+g.IntN(900)
				usage := fmt.Sprintf(`{"inputOther":%d,"output":%d,"inputCacheRead":%d,"inputCacheCreation":0}`, in, out, cached)
				put(fmt.Sprintf(`{"type":"usage.record","agentId":"main","model":"kimi-for-coding","usage":%s,"usageScope":"turn","time":%d}`, usage, now()))
				event(fmt.Sprintf(`{"type":"step.end","uuid":"%s","turnId":"%d","step":%d,"finishReason":"%s","usage":%s}`, step, turn, s, finish, usage))
			}
			switch g.IntN(40) {
			case 0:
				put(fmt.Sprintf(`{"type":"context.undo","agentId":"main","count":1,"time":%d}`, now()))
			case 1:
				put(fmt.Sprintf(`{"type":"context.apply_compaction","agentId":"main","summary":%s,"compactedCount":%d,"keptUserMessageCount":%d,"tokensBefore":%d,"tokensAfter":%d,"time":%d}`,
					jstr(g.text(2000)), 4+g.IntN(40), 1+g.IntN(3), 150000+g.IntN(50000), 8000+g.IntN(4000), now()))
			}
		}
		if err := lf.close(); err != nil {
			return err
		}
		written += lf.n
	}
	fmt.Fprintf(stdout, "wrote %d bytes of Kimi Code wires in %d files under %s\n", written, opt.files, opt.out)
	return nil
}
