package main

import (
	"path/filepath"
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

	// Protobuf in: an archive out, whatever OUT's extension.
	archive := filepath.Join(dir, "edges_archive.onnx")
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

	// Archive in, .onnx out: protobuf.
	back := filepath.Join(dir, "back.onnx")
	code, out, errOut = cli(t, "convert", archive, back)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ONNX protobuf")
	require.False(t, isArchivePath(t, back))
	m, err = loader.Load(back)
	require.NoError(t, err)
	require.Equal(t, orig.Graph, m.Graph)
	require.NoError(t, m.Close())

	// --to wins over the extension, and converting in place works.
	code, _, errOut = cli(t, "convert", "--to", "archive", back, back)
	require.Equal(t, 0, code, errOut)
	require.True(t, isArchivePath(t, back))

	code, _, errOut = cli(t, "convert", in, back, "--to", "zip")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `--to "zip": want archive or protobuf`)
	code, _, errOut = cli(t, "convert", in)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "want IN and OUT")
	code, _, errOut = cli(t, "convert", filepath.Join(dir, "missing.onnx"), back)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing.onnx")

	code, _, errOut = cli(t, "convert", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "The default --to is protobuf when IN is an")
}
