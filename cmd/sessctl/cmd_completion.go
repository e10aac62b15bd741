package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The completion scripts ask sessctl itself for candidates: urfave/cli
// answers a command line that ends in --generate-bash-completion with the
// commands or flags that fit.
const bashCompletion = `# sessctl completion for bash: eval "$(sessctl completion bash)"
_sessctl_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}" opts
  if [[ "$cur" == -* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _sessctl_complete sessctl
`

const zshCompletion = `# sessctl completion for zsh: eval "$(sessctl completion zsh)"
autoload -U +X bashcompinit && bashcompinit
` + bashCompletion

func completionCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: "Load it in your shell's startup file, for example:\n" +
			`  echo 'eval "$(sessctl completion bash)"' >> ~/.bashrc` + "\n" +
			"  sessctl completion fish > ~/.config/fish/completions/sessctl.fish\n" +
			"(make install puts the fish script under $(PREFIX)/share/fish/vendor_completions.d).",
		BashComplete: func(c *cli.Context) {
			for _, sh := range []string{"bash", "zsh", "fish"} {
				fmt.Fprintln(env.stdout, sh)
			}
		},
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash":
				fmt.Fprint(env.stdout, bashCompletion)
			case "zsh":
				fmt.Fprint(env.stdout, zshCompletion)
			case "fish":
				// urfave/cli writes it from the commands and flags, so it
				// never falls behind them
				script, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				fmt.Fprint(env.stdout, script)
			default:
				return usageErrorf("completion needs a shell: bash, zsh or fish")
			}
			return nil
		},
	}
}
