package main

import (
	"github.com/sessctl/sessctl/pkg/index"
	"github.com/urfave/cli/v2"
)

// noIndexFlag is --no-index, global and on the commands that read through
// the index (ls, stats), so that it may stand before or after the command.
func noIndexFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-index", Usage: "read every session file instead of the cache of what was read before (docs/index.md)"}
}

// indexWanted says whether a command reads through the index: not with
// --no-index (before or after the command) nor SESSCTL_NO_INDEX=1.
func indexWanted(env *appEnv, c *cli.Context) bool {
	for _, cc := range c.Lineage() {
		if cc.Bool("no-index") {
			return false
		}
	}
	return !index.Disabled(env.getenv)
}

// openIndex opens the index when wanted: nil (read every file) when not,
// or when it cannot be used now (docs/index.md).
func openIndex(env *appEnv, wanted bool) *index.Index {
	if !wanted {
		return nil
	}
	return index.Open(index.Dir(env.getenv, env.home))
}

// indexClosed, when set (by tests), is told what each run did with the
// index.
var indexClosed func(index.Stats)

// closeIndex writes what the run read to the index and closes it.
func closeIndex(ix *index.Index) {
	ix.Close()
	if indexClosed != nil && ix != nil {
		indexClosed(ix.Stats())
	}
}
