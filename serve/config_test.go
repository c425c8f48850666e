package serve

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepository(t *testing.T) {
	repo := t.TempDir()
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.Mkdir(filepath.Join(repo, d), 0o755))
	}
	pa := saveModel(t, filepath.Join(repo, "a"), affineModel())
	saveModel(t, filepath.Join(repo, "b"), echoModel())
	require.NoError(t, os.WriteFile(filepath.Join(repo, "b", ConfigFile),
		[]byte(`{"name":"echo2","device":"cpu","max_batch_size":4,"max_queue_delay":"3ms","instance_count":2,"queue_size":9}`), 0o644))
	base := ModelConfig{Device: "auto", MaxBatchSize: 16, QueueSize: 5}
	got, err := Repository([]string{repo}, base)
	require.NoError(t, err)
	assert.Equal(t, []ModelConfig{
		{Name: "a", Path: pa, Device: "auto", MaxBatchSize: 16, QueueSize: 5},
		{Name: "echo2", Path: filepath.Join(repo, "b", "echo.onnx"), Device: "cpu", MaxBatchSize: 4,
			MaxQueueDelay: Duration(3 * time.Millisecond), Instances: 2, QueueSize: 9},
	}, got)

	// A model folder alone, named by base (KServe's /mnt/models), and a
	// model file.
	got, err = Repository([]string{filepath.Join(repo, "a")}, ModelConfig{Name: "resnet"})
	require.NoError(t, err)
	assert.Equal(t, []ModelConfig{{Name: "resnet", Path: pa}}, got)
	got, err = Repository([]string{pa}, ModelConfig{})
	require.NoError(t, err)
	assert.Equal(t, []ModelConfig{{Name: "affine", Path: pa}}, got)

	// Errors name the file.
	require.NoError(t, os.WriteFile(filepath.Join(repo, "b", ConfigFile), []byte(`{"max_batch":4}`), 0o644))
	_, err = Repository([]string{repo}, base)
	assert.ErrorContains(t, err, `b/config.json: json: unknown field "max_batch"`)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "b", ConfigFile), []byte(`{"max_queue_delay":5}`), 0o644))
	_, err = Repository([]string{repo}, base)
	assert.ErrorContains(t, err, `a duration is a string`)
	require.NoError(t, os.Remove(filepath.Join(repo, "b", ConfigFile)))
	require.NoError(t, os.Remove(filepath.Join(repo, "b", "echo.onnx")))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "b", "x.txt"), nil, 0o644))
	_, err = Repository([]string{repo}, base)
	assert.ErrorContains(t, err, "has 0 .onnx or .zip files")
	_, err = Repository([]string{filepath.Join(repo, "missing.onnx")}, base)
	assert.ErrorContains(t, err, "missing.onnx")

	_, err = NewServer([]ModelConfig{{Name: "x", Path: pa, Precision: "int4"}}, Options{Logger: quiet})
	assert.ErrorContains(t, err, `precision "int4"`)
	_, err = NewServer([]ModelConfig{{Name: "x", Path: pa}, {Name: "x", Path: pa}}, Options{Logger: quiet})
	assert.ErrorContains(t, err, `two models named "x"`)
}
