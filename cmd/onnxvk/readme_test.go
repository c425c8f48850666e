package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeBlocks returns the lines of the README's sh code blocks, without
// comments.
func readmeBlocks(t *testing.T) (readme string, lines []string) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme = string(raw)
	in := false
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in:
			if i := strings.Index(line, "#"); i >= 0 {
				line = line[:i]
			}
			if line = strings.TrimSpace(line); line != "" {
				lines = append(lines, line)
			}
		}
	}
	return readme, lines
}

var flagToken = regexp.MustCompile(`^-{1,2}([a-z0-9][a-z0-9-]*)`)

// TestREADMECommands runs the README's commands: the first block's example
// runs; every onnxvk line of a block names a command, and each flag on it
// is one that command has; and every flag of every command is written
// somewhere in the README.
func TestREADMECommands(t *testing.T) {
	readme, lines := readmeBlocks(t)
	require.Equal(t, "go run ./cmd/onnxvk run", lines[0], "the README's first command runs the example")
	dir := t.TempDir()
	code, out, errOut := cli(t, "run", "-o", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "edges.png")

	seen := map[string]bool{}
	for _, line := range lines {
		for _, part := range strings.Split(line, "(also ") {
			f := strings.Fields(strings.Trim(part, "() "))
			if len(f) < 2 || f[0] != "onnxvk" {
				continue
			}
			cmd := f[1]
			if cmd == "--version" {
				continue
			}
			require.True(t, slices.ContainsFunc(commands, func(c command) bool { return c.name == cmd }), "README: %q: no command %s", line, cmd)
			seen[cmd] = true
			flags, _ := commandFlags(commands[slices.IndexFunc(commands, func(c command) bool { return c.name == cmd })])
			for _, tok := range f[2:] {
				m := flagToken.FindStringSubmatch(strings.TrimLeft(tok, "[("))
				if m == nil {
					continue
				}
				require.True(t, slices.ContainsFunc(flags, func(fl string) bool { return strings.TrimLeft(fl, "-") == m[1] }),
					"README: %q: onnxvk %s has no flag %s (it has %v)", line, cmd, m[0], flags)
			}
		}
	}
	for _, c := range commands {
		require.True(t, seen[c.name], "the README's CLI block does not show onnxvk %s", c.name)
		flags, _ := commandFlags(c)
		for _, fl := range flags {
			name := strings.TrimLeft(fl, "-")
			mentioned := strings.Contains(readme, "--"+name) || len(name) == 1 && strings.Contains(readme, "-"+name+" ")
			require.True(t, mentioned, "the README never mentions onnxvk %s's flag %s", c.name, fl)
		}
	}
}
