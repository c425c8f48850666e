//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package loader

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// TestTruncatedDuringLoad truncates each file Load maps right after it
// is mapped, before anything reads it: the model file itself, external
// data that Load copies (an unaligned tensor) or checks (its SHA-1), and
// an archive. Load fails with ErrMappedFileChanged naming the file, where
// the process died of SIGBUS before.
func TestTruncatedDuringLoad(t *testing.T) {
	w := float32Bytes(1, 2, 3, 4)
	tests := []struct {
		name string
		// write writes the model to dir and returns its path and the
		// path of the file to truncate.
		write func(t *testing.T, dir string) (model, victim string)
	}{
		{"model file", func(t *testing.T, dir string) (string, string) {
			model := filepath.Join(dir, "m.onnx")
			writeModelPB(t, model, identityModelPB(tensorPB("w", graph.Float, []int64{4}, func(tp *onnxpb.TensorProto) { tp.RawData = w })))
			return model, model
		}},
		{"unaligned external data", func(t *testing.T, dir string) (string, string) {
			model, weights := filepath.Join(dir, "m.onnx"), filepath.Join(dir, "w.bin")
			require.NoError(t, os.WriteFile(weights, append(make([]byte, 4), w...), 0o644))
			writeModelPB(t, model, identityModelPB(externalPB("w", graph.Float, []int64{4}, "w.bin", 4, -1, "")))
			return model, weights
		}},
		{"external data checksum", func(t *testing.T, dir string) (string, string) {
			model, weights := filepath.Join(dir, "m.onnx"), filepath.Join(dir, "w.bin")
			require.NoError(t, os.WriteFile(weights, w, 0o644))
			writeModelPB(t, model, identityModelPB(externalPB("w", graph.Float, []int64{4}, "w.bin", 0, -1, sha1Hex(w))))
			return model, weights
		}},
		{"archive", func(t *testing.T, dir string) (string, string) {
			model := filepath.Join(dir, "m.onnx")
			require.NoError(t, os.WriteFile(model, alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, smallArchiveModel(t, "w", 4), 0}), 0o644))
			return model, model
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model, victim := tt.write(t, t.TempDir())
			truncated := false
			mappedHook = func(name string) {
				if name == victim {
					require.NoError(t, os.Truncate(victim, 0))
					truncated = true
				}
			}
			defer func() { mappedHook = nil }()
			m, err := Load(model)
			require.True(t, truncated, "%s was not mapped", victim)
			if err == nil {
				m.Close()
			}
			require.ErrorIs(t, err, graph.ErrMappedFileChanged)
			require.ErrorContains(t, err, victim)
			require.ErrorContains(t, err, `model "m.onnx"`)
		})
	}
}
