//go:build !urfave_cli_no_docs

package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The man page is made by urfave/cli from the commands and flags, so it
// never falls behind them. Its code (and go-md2man) is only in builds
// without the tag urfave_cli_no_docs: `make build` and `make install` use
// the tag for the installed binary (it starts faster without them), and
// `make install` writes the page with `go run ./cmd/sessctl gen-man`, a
// build without it. The command is hidden: it is for packagers.
func init() { extraCommands = append(extraCommands, genManCommand) }

func genManCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:   "gen-man",
		Usage:  "print the man page (roff) of sessctl",
		Hidden: true,
		Action: func(c *cli.Context) error {
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(env.stdout, page)
			return err
		},
	}
}
