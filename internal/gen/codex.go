package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// genCodex writes a Codex home: sessions/YYYY/MM/DD/rollout-….jsonl with a
// session_meta, turn_context per turn (the model changes now and then),
// messages, function calls with large outputs, and token_count events —
// some written twice (as 0.104 does), some with info null, and a synthetic
// post-compaction event whose running total does not change.
func genCodex(opt options, stdout io.Writer) error {
	r := newRNG(opt.seed, 2)
	base := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	var written int64
	per := opt.size / int64(opt.files)
	for i := 0; i < opt.files; i++ {
		g := newRNG(opt.seed, uint64(200+i))
		t := base.Add(time.Duration(i) * 7 * time.Hour)
		id := "01a2" + g.uuid()[4:]
		lf, err := createLines(filepath.Join(opt.out, "sessions", t.Format("2006/01/02"), "rollout-"+t.Format("2006-01-02T15-04-05")+"-"+id+".jsonl"))
		if err != nil {
			return err
		}
		ts := func() string {
			t = t.Add(time.Duration(100+g.IntN(5000)) * time.Millisecond)
			return t.Format("2006-01-02T15:04:05.000Z")
		}
		put := func(typ, payload string) {
			lf.put(`{"timestamp":"` + ts() + `","type":"` + typ + `","payload":` + payload + `}`)
		}
		put("session_meta", `{"id":"`+id+`","timestamp":"`+t.Format("2006-01-02T15:04:05.000Z")+`","cwd":"/home/dev/src/proj`+fmt.Sprint(i%4)+`","originator":"codex_cli_rs","cli_version":"0.104.0","source":"cli","model_provider":"openai"}`)
		put("event_msg", `{"type":"token_count","info":null,"rate_limits":{"primary":null}}`)
		var tot [5]int64 // input, cached, output, reasoning, total
		model := []string{"gpt-5", "gpt-5.3-codex", "gpt-5-mini"}[r.IntN(3)]
		target := per/2 + int64(g.IntN(int(per)+1))
		for lf.n < target {
			if g.IntN(5) == 0 {
				model = []string{"gpt-5", "gpt-5.3-codex", "gpt-5-mini"}[g.IntN(3)]
			}
			put("turn_context", `{"cwd":"/home/dev","approval_policy":"never","model":"`+model+`","summary":"auto"}`)
			put("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":`+jstr(g.text(50+g.IntN(800)))+`}]}`)
			for s := 0; s < 1+g.IntN(4); s++ {
				call := "call_" + g.hexID(20)
				put("response_item", `{"type":"function_call","name":"exec_command","arguments":`+jstr(`{"cmd":"`+g.hexID(12)+`"}`)+`,"call_id":"`+call+`"}`)
				put("response_item", `{"type":"function_call_output","call_id":"`+call+`","output":`+jstr(g.text(300+g.IntN(g.IntN(20000)+1)))+`}`)
				in := int64(2000 + g.IntN(30000))
				cached := in * int64(g.IntN(90)) / 100
				out := int64(10 + g.IntN(900))
				reas := out * int64(g.IntN(50)) / 100
				tot[0] += in
				tot[1] += cached
				tot[2] += out
				tot[3] += reas
				tot[4] += in + out
				ev := fmt.Sprintf(`{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":%d,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":%d,"total_tokens":%d},"model_context_window":258400},"rate_limits":null}`,
					tot[0], tot[1], tot[2], tot[3], tot[4], in, cached, out, reas, in+out)
				put("event_msg", ev)
				if g.IntN(2) == 0 {
					put("event_msg", ev) // written twice, as 0.104 does
				}
			}
			put("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":`+jstr(g.text(100+g.IntN(1500)))+`}]}`)
			if g.IntN(30) == 0 {
				put("compacted", `{"message":"","replacement_history":[]}`)
				put("event_msg", fmt.Sprintf(`{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":%d,"total_tokens":%d},"last_token_usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":6187},"model_context_window":258400},"rate_limits":null}`,
					tot[0], tot[1], tot[2], tot[3], tot[4]))
			}
		}
		if err := lf.close(); err != nil {
			return err
		}
		written += lf.n
	}
	fmt.Fprintf(stdout, "wrote %d bytes of Codex rollouts in %d files under %s\n", written, opt.files, opt.out)
	return nil
}
