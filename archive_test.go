package onnxvk_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader"
)

// Sizes of the large model: three float32 weights of K×N, 2.25 GiB in all,
// past protobuf's 2 GiB limit.
const (
	largeK       = 16384
	largeN       = 12288
	largeWeights = 3
)

// largeRow and largeCol give W_i[k][n] = largeRow(k, i) + largeCol(n):
// small integers, so that every sum of the MatMul is exact in float32.
func largeRow(k, i int) float32 { return float32((k*7+i)%5 - 2) }
func largeCol(n int) float32    { return float32(n%7 - 3) }
func largeX(k int) float32      { return float32(k%3 - 1) }

// largeModel builds y_i = x @ W_i for each weight.
func largeModel() *graph.Model {
	g := graph.NewGraph("large")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, largeK))}}
	col := make([]float32, largeN)
	for n := range col {
		col[n] = largeCol(n)
	}
	for i := range largeWeights {
		w := graph.NewTensor(graph.Float, []int64{largeK, largeN})
		v := graph.View[float32](w)
		for k := range largeK {
			row, c := v[k*largeN:(k+1)*largeN], largeRow(k, i)
			for n := range row {
				row[n] = col[n] + c
			}
		}
		name, out := fmt.Sprintf("layer.%d/weight", i), fmt.Sprintf("y%d", i)
		g.Initializers[name] = w
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: out, Type: graph.TensorType(graph.Float, graph.ShapeOf(1, largeN))})
		g.Nodes = append(g.Nodes, &graph.Node{Name: "mm" + out, OpType: "MatMul", Inputs: []string{"x", name}, Outputs: []string{out}, Index: i})
	}
	return &graph.Model{Name: "large", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// rssAnon reads RssAnon from /proc/self/status, in bytes (0 where absent).
func rssAnon() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestArchiveLargeModel saves a model with more than 2 GiB of weights as an
// ONNX archive and as protobuf with external data, then loads and runs
// both.
func TestArchiveLargeModel(t *testing.T) {
	testenv.SkipLong(t) // writes two models of 2.25 GiB each
	dir := t.TempDir()
	var fs syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &fs))
	const need = 2 * largeWeights * largeK * largeN * 4 * 11 / 10
	if free := int64(fs.Bavail) * fs.Bsize; free < need {
		testenv.Skip(t, fmt.Sprintf("%s has %d MiB free, the test needs %d MiB", dir, free>>20, need>>20))
	}
	archive := filepath.Join(dir, "large.onnx")
	pb := filepath.Join(dir, "large_pb.onnx")
	m := largeModel()
	require.NoError(t, loader.SaveArchive(m, archive))
	_, err := loader.Marshal(m)
	require.ErrorContains(t, err, "2 GiB")
	require.NoError(t, loader.Save(m, pb, loader.WithExternalData("large_pb.onnx.data", 1024, 0)))
	m = nil
	runtime.GC()
	debug.FreeOSMemory()

	x := make([]float32, largeK)
	var sumX float32
	want := make([][]float32, largeWeights)
	for k := range x {
		x[k] = largeX(k)
		sumX += x[k]
	}
	for i := range want {
		var base float32
		for k := range x {
			base += x[k] * largeRow(k, i)
		}
		want[i] = make([]float32, largeN)
		for n := range want[i] {
			want[i][n] = base + largeCol(n)*sumX
		}
	}
	xt, err := onnxvk.NewTensor([]int64{1, largeK}, x)
	require.NoError(t, err)
	for _, path := range []string{archive, pb} {
		before := rssAnon()
		sess, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
		require.NoError(t, err, path)
		loaded := rssAnon()
		out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": xt})
		require.NoError(t, err, path)
		for i := range want {
			require.Equal(t, want[i], graph.View[float32](out[fmt.Sprintf("y%d", i)].Graph()), "%s: y%d", filepath.Base(path), i)
		}
		ran := rssAnon()
		require.NoError(t, sess.Close())
		var ru syscall.Rusage
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		t.Logf("%s: RssAnon %d MiB before load, %d MiB after, %d MiB after a run; peak RSS so far %d MiB (building the model in memory took 2.25 GiB)",
			filepath.Base(path), before>>20, loaded>>20, ran>>20, ru.Maxrss>>10)
	}
}

func TestLoadReaderAtArchive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mlp.onnx")
	require.NoError(t, loader.SaveArchive(mlpModel(), path))
	ref, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer ref.Close()
	x := randomInput(t, 3, 2)
	want, err := ref.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	require.NoError(t, err)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, r := range []io.ReaderAt{f, bytes.NewReader(raw)} {
		sess, err := onnxvk.LoadReaderAt(r, st.Size(), onnxvk.WithDevice("cpu"))
		require.NoError(t, err)
		got, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
		require.NoError(t, err)
		require.Equal(t, want["probs"].Bytes(), got["probs"].Bytes())
		require.NoError(t, sess.Close())
	}
	sess, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	require.NoError(t, sess.Close())
	_, err = onnxvk.LoadReaderAt(bytes.NewReader(raw[:len(raw)-1]), st.Size()-1)
	require.ErrorIs(t, err, loader.ErrArchive)
}
