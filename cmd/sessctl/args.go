package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a command's flags in front of its positional arguments,
// so that `sessctl diff SESSION --rotation 1` works like
// `sessctl diff --rotation 1 SESSION` (urfave/cli v2 stops parsing flags at
// the first argument). Whether a flag takes a value comes from the command's
// own flag definitions; "--" ends the flags as usual.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args // shell completion looks at the last argument
	}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") { // global flags
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	if cmd == nil {
		return args
	}
	// a command with subcommands (trash ls|restore|empty): the flags are
	// the subcommand's
	for len(cmd.Subcommands) > 0 && i+1 < len(args) {
		sub := cmd.Command(args[i+1])
		if sub == nil {
			break
		}
		i++
		cmd = sub
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	out := append([]string{}, args[:i+1]...)
	var flags, positional []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			positional = append(positional, rest[j:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && j+1 < len(rest) {
			j++
			flags = append(flags, rest[j])
		}
	}
	out = append(out, flags...)
	return append(out, positional...)
}
