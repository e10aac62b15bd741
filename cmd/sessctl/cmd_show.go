package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/show"
	"github.com/urfave/cli/v2"
)

type showOptions struct {
	all      bool
	full     bool
	thinking bool
	json     bool
	color    bool
}

func showCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the conversation the client will send the model when it resumes the session",
		ArgsUsage: "SESSION",
		Description: "Each message with its role and text, tool calls with their results, compaction\n" +
			"summaries marked, numbered by turn as `sessctl checkpoints` and `revert` number them.\n" +
			"--all also shows what the client no longer sends (rolled back, compacted away, off\n" +
			"the resumed chain, or only in a rotation), marked.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "also show what is no longer sent, marked"},
			&cli.BoolFlag{Name: "full", Usage: "print tool calls and results whole, not shortened"},
			&cli.BoolFlag{Name: "thinking", Usage: "also show the model's reasoning"},
			rootFlag(), jsonFlag(), noColorFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("show needs exactly one SESSION").withHint("sessctl ls lists the sessions")
			}
			s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
			if err != nil {
				return err
			}
			return runShow(c.Context, env, namedFile(s, c.Args().First()), showOptions{all: c.Bool("all"), full: c.Bool("full"), thinking: c.Bool("thinking"),
				json: c.Bool("json"), color: useColor(env.stdout, env, c.Bool("no-color"))})
		},
	}
}

// showToolLines bounds a tool call or result in text output (--full
// prints them whole).
const (
	showToolLines = 6
	showToolWidth = 200
)

func runShow(ctx context.Context, env *appEnv, s *session.Session, opt showOptions) error {
	// the garbage collector keeps the heap near what the longest line needs
	defer boundMemory([]*session.Session{s})()
	if notYet(env, s) {
		return nil
	}
	w := bufio.NewWriterSize(env.stdout, 64<<10)
	defer w.Flush()
	sopt := show.Options{All: opt.all, Thinking: opt.thinking}
	if opt.json {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return show.Show(ctx, s, sopt, func(it *show.Item) error { return enc.Encode(it) })
	}
	col := colorer{on: opt.color}
	r := &showRenderer{w: w, col: col, full: opt.full, turn: -2}
	err := show.Show(ctx, s, sopt, r.item)
	if err != nil {
		return err
	}
	if r.n == 0 {
		fmt.Fprintf(w, "%s: no messages\n", line(s.Main))
	}
	return nil
}

type showRenderer struct {
	w    io.Writer
	col  colorer
	full bool
	turn int
	file string
	n    int
}

func (r *showRenderer) item(it *show.Item) error {
	r.n++
	if it.File != r.file && it.State == session.Rotated {
		fmt.Fprintf(r.w, "%s\n", r.col.dim("── only in "+line(it.File)+" ──"))
		r.turn = -2
	}
	r.file = it.File
	if it.Turn != r.turn {
		r.turn = it.Turn
		head := fmt.Sprintf("turn %d", it.Turn)
		if it.Turn < 0 {
			head = "before the first turn"
		}
		fmt.Fprintf(r.w, "%s\n", r.col.bold("── "+head+" ──"))
	}
	mark := ""
	if it.State != session.Live {
		mark = r.col.yellow("["+it.State.String()+"] ") + ""
	}
	if it.Injected {
		mark += r.col.dim("[injected] ")
	}
	switch it.Type {
	case show.TypeSummary:
		fmt.Fprintf(r.w, "%s%s\n%s\n", mark, r.col.bold("compaction summary:"), indent(r.body(it.Text, false), "  "))
	case show.TypeToolCall:
		fmt.Fprintf(r.w, "%s%s %s %s\n", mark, r.col.green("→ "+line(it.Name)), r.col.dim("["+line(it.ID)+"]"), r.body(it.Text, true))
	case show.TypeToolResult:
		name := it.Name
		if name == "" {
			name = "result"
		}
		errMark := ""
		if it.IsError {
			errMark = r.col.red(" (error)")
		}
		fmt.Fprintf(r.w, "%s%s%s %s\n%s\n", mark, r.col.green("← "+line(name)), errMark, r.col.dim("["+line(it.ID)+"]"), indent(r.body(it.Text, true), "  "))
	case show.TypeThinking:
		fmt.Fprintf(r.w, "%s%s\n%s\n", mark, r.col.dim("thinking:"), indent(r.col.dim(r.body(it.Text, true)), "  "))
	default:
		fmt.Fprintf(r.w, "%s%s\n%s\n", mark, r.col.bold(it.Role+":"), indent(r.body(it.Text, false), "  "))
	}
	return nil
}

// body makes a text printable: control characters shown visibly, and tool
// texts shortened unless --full.
func (r *showRenderer) body(s string, tool bool) string {
	if tool && !r.full {
		lines := strings.Split(s, "\n")
		more := 0
		if len(lines) > showToolLines {
			more = len(lines) - showToolLines
			lines = lines[:showToolLines]
		}
		for i, l := range lines {
			lines[i] = ellipsis(l, showToolWidth)
		}
		s = strings.Join(lines, "\n")
		if more > 0 {
			s += fmt.Sprintf("\n… %d more lines (--full shows them)", more)
		}
	}
	return block(s)
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}
