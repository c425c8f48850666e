package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

func TestCompletion(t *testing.T) {
	code, bash, errOut := cli(t, "completion", "bash")
	require.Equal(t, 0, code, errOut)
	code, fish, errOut := cli(t, "completion", "fish")
	require.Equal(t, 0, code, errOut)
	code, zsh, errOut := cli(t, "completion", "zsh")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, zsh, "bashcompinit")
	for _, c := range commands {
		require.Contains(t, fish, "-a "+c.name+" ")
		flags, _ := commandFlags(c)
		for _, f := range flags {
			require.Contains(t, bash, f, c.name)
			require.Contains(t, zsh, f, c.name)
		}
	}
	require.Contains(t, fish, "'__fish_seen_subcommand_from bench' -l concurrency")
	require.Contains(t, fish, "'__fish_seen_subcommand_from run' -o i ")

	code, _, errOut = cli(t, "completion", "tcsh")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown shell "tcsh"`)

	sh, err := exec.LookPath("bash")
	if err != nil {
		testenv.Skip(t, "no bash to run the bash completion in")
	}
	script := filepath.Join(t.TempDir(), "onnxvk.bash")
	require.NoError(t, os.WriteFile(script, []byte(bash), 0o644))
	complete := func(words ...string) string {
		t.Helper()
		prog := "source " + script + "; COMP_WORDS=(" + strings.Join(words, " ") + "); COMP_CWORD=" +
			strconv.Itoa(len(words)-1) + `; _onnxvk; echo "${COMPREPLY[@]}"`
		out, err := exec.Command(sh, "-c", prog).CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	require.Equal(t, "bench", complete("onnxvk", "be"))
	require.Equal(t, "--concurrency --config", complete("onnxvk", "bench", "--con"))
	require.Equal(t, "convert conformance completion", complete("onnxvk", "help", "co"))
}
