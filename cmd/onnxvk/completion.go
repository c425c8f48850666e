package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// commandFlags returns a command's flags as its --help lists them, with
// their dashes and the first line of their usage.
func commandFlags(c command) (flags, usage []string) {
	var help bytes.Buffer
	if err := c.run([]string{"--help"}, &help, io.Discard); err != nil && help.Len() == 0 {
		return nil, nil
	}
	lines := strings.Split(help.String(), "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "  -") {
			continue
		}
		flags = append(flags, strings.Fields(line)[0])
		text := ""
		if i+1 < len(lines) {
			text = strings.TrimSpace(lines[i+1])
		}
		usage = append(usage, text)
	}
	return flags, usage
}

// cmdCompletion prints a shell completion script for the commands and
// their flags.
func cmdCompletion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("completion", "completion bash|zsh|fish", stdout)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one shell: bash, zsh or fish")
	}
	switch pos[0] {
	case "bash":
		fmt.Fprint(stdout, "# onnxvk completion for bash: source it, or save it as\n# /usr/share/bash-completion/completions/onnxvk.\n")
		writeBashCompletion(stdout)
	case "zsh":
		fmt.Fprint(stdout, "# onnxvk completion for zsh (through bash's): source it from ~/.zshrc.\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBashCompletion(stdout)
	case "fish":
		writeFishCompletion(stdout)
	default:
		return usagef("unknown shell %q: want bash, zsh or fish", pos[0])
	}
	return nil
}

func commandNames() []string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return names
}

func writeBashCompletion(w io.Writer) {
	fmt.Fprintf(w, `_onnxvk() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "%s help --version" -- "$cur"))
		return
	fi
	if [ "$cmd" = help ]; then
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "%s" -- "$cur"))
		return
	fi
	case $cur in
	-*)
		case $cmd in
`, strings.Join(commandNames(), " "), strings.Join(commandNames(), " "))
	for _, c := range commands {
		flags, _ := commandFlags(c)
		fmt.Fprintf(w, "\t\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", c.name, strings.Join(append(flags, "--help"), " "))
	}
	fmt.Fprint(w, `		esac
		;;
	*)
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	esac
}
complete -o filenames -o bashdefault -F _onnxvk onnxvk
`)
}

func writeFishCompletion(w io.Writer) {
	fmt.Fprint(w, "# onnxvk completion for fish: save it as ~/.config/fish/completions/onnxvk.fish.\n")
	fmt.Fprint(w, "complete -c onnxvk -f -n __fish_use_subcommand -a help -d 'print the commands, or a command\\'s usage'\n")
	for _, c := range commands {
		fmt.Fprintf(w, "complete -c onnxvk -f -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range commands {
		flags, usage := commandFlags(c)
		for i, f := range flags {
			opt := "-l " + strings.TrimPrefix(f, "--")
			if !strings.HasPrefix(f, "--") {
				opt = "-o " + strings.TrimPrefix(f, "-")
			}
			fmt.Fprintf(w, "complete -c onnxvk -n '__fish_seen_subcommand_from %s' %s -d %s\n", c.name, opt, fishQuote(usage[i]))
		}
		fmt.Fprintf(w, "complete -c onnxvk -n '__fish_seen_subcommand_from %s' -F\n", c.name)
	}
}

// fishQuote quotes s for fish, cut to its first 60 characters.
func fishQuote(s string) string {
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
