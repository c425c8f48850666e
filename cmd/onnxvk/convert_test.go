package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/loader"
)

func isArchivePath(t *testing.T, path string) bool {
	t.Helper()
	format, err := fileFormat(path)
	require.NoError(t, err)
	return format == "archive"
}

func TestConvert(t *testing.T) {
	in := exampleFile(t)
	dir := t.TempDir()
	orig, err := loader.Load(in)
	require.NoError(t, err)
	defer orig.Close()

	// OUT not ending in .onnx: an archive.
	archive := filepath.Join(dir, "edges.zip")
	code, out, errOut := cli(t, "convert", in, archive)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ONNX archive")
	require.True(t, isArchivePath(t, archive))
	m, err := loader.Load(archive)
	require.NoError(t, err)
	require.Equal(t, orig.Graph, m.Graph)
	require.NoError(t, m.Close())
	code, _, errOut = cli(t, "inspect", archive)
	require.Equal(t, 0, code, errOut)

	// .onnx out: protobuf, mode 0644.
	back := filepath.Join(dir, "back.onnx")
	code, out, errOut = cli(t, "convert", archive, back)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ONNX protobuf")
	require.False(t, isArchivePath(t, back))
	m, err = loader.Load(back)
	require.NoError(t, err)
	require.Equal(t, orig.Graph, m.Graph)
	require.NoError(t, m.Close())
	if runtime.GOOS != "windows" {
		for _, p := range []string{archive, back} {
			st, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o644), st.Mode().Perm(), p)
		}
	}

	// --to wins over the extension.
	archive2 := filepath.Join(dir, "archive.onnx")
	code, _, errOut = cli(t, "convert", "--to", "archive", back, archive2)
	require.Equal(t, 0, code, errOut)
	require.True(t, isArchivePath(t, archive2))

	// Never over the input, by any name.
	before, err := os.ReadFile(back)
	require.NoError(t, err)
	for _, out := range []string{back, filepath.Join(dir, ".", "back.onnx")} {
		code, _, errOut = cli(t, "convert", "--to", "archive", back, out)
		require.Equal(t, 2, code)
		require.Contains(t, errOut, "is the input")
	}
	after, err := os.ReadFile(back)
	require.NoError(t, err)
	require.Equal(t, before, after)

	code, _, errOut = cli(t, "convert", in, back, "--to", "zip")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--to "zip": want archive or protobuf`)
	code, _, errOut = cli(t, "convert", in)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "want IN and OUT")
	code, _, errOut = cli(t, "convert", filepath.Join(dir, "missing.onnx"), back)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing.onnx")

	code, out, _ = cli(t, "convert", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "The default --to is protobuf when OUT ends in")
}
