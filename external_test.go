package onnxvk_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// writeSplitModel saves mlpModel with its float weights spread over two
// external files at unaligned and aligned offsets, and returns the model
// path. edit may change the external references before the model is written.
func writeSplitModel(t *testing.T, dir string, edit func(tp *onnxpb.TensorProto)) string {
	mp, err := loader.ToProto(mlpModel())
	require.NoError(t, err)
	files := map[string][]byte{}
	for i, tp := range mp.Graph.Initializer {
		if tp.GetDataType() != int32(onnxpb.TensorProto_FLOAT) {
			continue
		}
		loc := "weights_" + strconv.Itoa(i%2) + ".bin"
		pad := 8 * (i + 1)
		files[loc] = append(files[loc], make([]byte, pad)...)
		offset := len(files[loc])
		files[loc] = append(files[loc], tp.RawData...)
		tp.ExternalData = []*onnxpb.StringStringEntryProto{
			{Key: proto.String("location"), Value: proto.String(loc)},
			{Key: proto.String("offset"), Value: proto.String(strconv.Itoa(offset))},
			{Key: proto.String("length"), Value: proto.String(strconv.Itoa(len(tp.RawData)))},
		}
		tp.RawData = nil
		tp.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
		if edit != nil {
			edit(tp)
		}
	}
	require.Len(t, files, 2)
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	raw, err := proto.Marshal(mp)
	require.NoError(t, err)
	path := filepath.Join(dir, "model.onnx")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	return path
}

func TestExternalDataSplitRuns(t *testing.T) {
	ref, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer ref.Close()
	path := writeSplitModel(t, t.TempDir(), nil)
	sess, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	require.ElementsMatch(t, []string{"weights_0.bin", "weights_1.bin"}, sess.Model().ExternalFiles)

	in := map[string]*onnxvk.Tensor{"x": randomInput(t, 3, 4)}
	want, err := ref.Run(context.Background(), in)
	require.NoError(t, err)
	got, err := sess.Run(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, want["probs"].Bytes(), got["probs"].Bytes())
}

func TestExternalDataEscapesRefused(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.bin"), make([]byte, 1<<16), 0o644))
	cases := map[string]func(dir string) string{
		"dotdot":   func(string) string { return "../secret.bin" },
		"absolute": func(string) string { return filepath.Join(outside, "secret.bin") },
		"symlink": func(dir string) string {
			require.NoError(t, os.Symlink(filepath.Join(outside, "secret.bin"), filepath.Join(dir, "link.bin")))
			return "link.bin"
		},
		"nested dotdot": func(string) string { return "sub/../../secret.bin" },
	}
	for name, location := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "model")
			require.NoError(t, os.Mkdir(dir, 0o755))
			loc := location(dir)
			path := writeSplitModel(t, dir, func(tp *onnxpb.TensorProto) {
				if tp.GetName() == "w2" {
					tp.ExternalData[0].Value = proto.String(loc)
				}
			})
			_, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
			require.ErrorIs(t, err, loader.ErrExternalData)
			require.ErrorContains(t, err, `"w2"`)
		})
	}
}
