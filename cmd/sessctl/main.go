// Command sessctl inspects and maintains the JSONL session files of coding
// agents (Kimi CLI, Kimi Code, Claude Code, Codex, clawdcode).
package main

import (
	"os"

	_ "github.com/sessctl/sessctl/pkg/agent/all" // every agent's home
)

func main() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) }
