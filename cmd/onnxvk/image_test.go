package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/loader"
)

// identityModel writes a model passing x, of the given type and shape,
// through to y.
func identityModel(t *testing.T, dt graph.DType, shape graph.Shape) string {
	g := graph.NewGraph("identity")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(dt, shape)}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(dt, shape)}}
	g.Nodes = []*graph.Node{{OpType: "Identity", Inputs: []string{"x"}, Outputs: []string{"y"}}}
	path := filepath.Join(t.TempDir(), "identity.onnx")
	require.NoError(t, loader.Save(&graph.Model{Name: "identity", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}, path))
	return path
}

// picture writes a PNG of w×h whose left half is red and right half blue.
func picture(t *testing.T, w, h int) string {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{255, 0, 0, 255}
			if x >= w/2 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	path := filepath.Join(t.TempDir(), "picture.png")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, png.Encode(f, img))
	require.NoError(t, f.Close())
	return path
}

func TestPictureInput(t *testing.T) {
	pic := picture(t, 40, 20)
	out := t.TempDir()

	// NCHW float32 of 4×8: the picture scaled to cover 4×8 (exactly, here),
	// values 0..1 with --mean 0,0,0 --std 1,1,1.
	model := identityModel(t, graph.Float, graph.ShapeOf(1, 3, 4, 8))
	code, _, errOut := cli(t, "run", model, "--device", "cpu", "-i", "x="+pic, "--mean", "0,0,0", "--std", "1,1,1", "-o", out)
	require.Equal(t, 0, code, errOut)
	y, err := npy.ReadFile(filepath.Join(out, "y.npy"))
	require.NoError(t, err)
	v := graph.View[float32](y)
	require.Equal(t, []int64{1, 3, 4, 8}, y.Shape)
	for row := range 4 {
		require.Equal(t, []float32{1, 1, 1, 1, 0, 0, 0, 0}, v[row*8:row*8+8], "red, row %d", row)
		require.Equal(t, []float32{0, 0, 0, 0, 0, 0, 0, 0}, v[32+row*8:32+row*8+8], "green, row %d", row)
		require.Equal(t, []float32{0, 0, 0, 0, 1, 1, 1, 1}, v[64+row*8:64+row*8+8], "blue, row %d", row)
	}

	// The ImageNet normalisation by default.
	code, _, errOut = cli(t, "run", model, "--device", "cpu", "-i", "x="+pic, "-o", out)
	require.Equal(t, 0, code, errOut)
	y, err = npy.ReadFile(filepath.Join(out, "y.npy"))
	require.NoError(t, err)
	require.InDelta(t, (1-0.485)/0.229, graph.View[float32](y)[0], 1e-5)

	// NHWC uint8: the raw values; a 2×4 centre crop of the picture scaled
	// to cover it keeps both halves.
	model = identityModel(t, graph.Uint8, graph.ShapeOf(1, 2, 4, 3))
	code, _, errOut = cli(t, "run", model, "--device", "cpu", "-i", "x="+pic, "-o", out)
	require.Equal(t, 0, code, errOut)
	y, err = npy.ReadFile(filepath.Join(out, "y.npy"))
	require.NoError(t, err)
	require.Equal(t, []uint8{255, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 255}, graph.View[uint8](y)[:12])

	model = identityModel(t, graph.Float, graph.ShapeOf(1, 4, 4))
	code, _, errOut = cli(t, "run", model, "--device", "cpu", "-i", "x="+pic)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "a picture fills a float32 or uint8 input of shape [1,3,H,W] or [1,H,W,3]")
	code, _, errOut = cli(t, "run", model, "--mean", "1,2")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "want three numbers R,G,B")
}

func TestTopK(t *testing.T) {
	model := identityModel(t, graph.Float, graph.ShapeOf(1, 12))
	scores, err := graph.FromSlice(graph.Float, []int64{1, 12}, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	require.NoError(t, err)
	in := filepath.Join(t.TempDir(), "scores.npy")
	require.NoError(t, npy.WriteFile(in, scores))
	labels := filepath.Join(t.TempDir(), "labels.txt")
	require.NoError(t, os.WriteFile(labels, []byte("c0\nc1\nc2\nc3\nc4\nc5\nc6\nc7\nc8\nc9\nc10\nc11\n"), 0o644))
	code, out, errOut := cli(t, "run", model, "--device", "cpu", "-i", "x="+in, "--labels", labels)
	require.Equal(t, 0, code, errOut)
	// softmax of 0..11: e^11 / Σ e^k = 0.632.
	require.Contains(t, out, "  top 5 of 12 classes: 11 c11 (0.632) 10 c10 (0.233) 9 c9 (0.086) 8 c8 (0.031) 7 c7 (0.012)\n")
}

// TestOutOfOrderModel inspects and runs a model whose nodes are listed
// after their readers: the loader reorders them and inspect says so.
func TestOutOfOrderModel(t *testing.T) {
	g := graph.NewGraph("reversed")
	f := graph.TensorType(graph.Float, graph.ShapeOf(2))
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: f}}
	g.Nodes = []*graph.Node{
		{Name: "relu", OpType: "Relu", Inputs: []string{"n"}, Outputs: []string{"y"}},
		{Name: "neg", OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"n"}},
	}
	path := filepath.Join(t.TempDir(), "reversed.onnx")
	require.NoError(t, loader.Save(&graph.Model{Name: "reversed", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}, path))
	code, out, errOut := cli(t, "inspect", path)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "warning    graph \"reversed\": 2 of 2 nodes were not in topological order; reordered\n")
	code, out, errOut = cli(t, "run", "--device", "cpu", path)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "output y: float32[2]")
}

// TestRandomLowFloatInput runs float16 and bfloat16 models without -i: the
// random inputs are uniform in [0, 1), rounded to the type.
func TestRandomLowFloatInput(t *testing.T) {
	model := identityModel(t, graph.Float16, graph.ShapeOf(2, 64))
	out := t.TempDir()
	code, _, errOut := cli(t, "run", model, "--device", "cpu", "-o", out)
	require.Equal(t, 0, code, errOut)
	y, err := npy.ReadFile(filepath.Join(out, "y.npy"))
	require.NoError(t, err)
	require.Equal(t, graph.Float16, y.DType)
	seen := map[uint16]bool{}
	for _, h := range graph.View[uint16](y) {
		f := float16.Frombits(h).Float32()
		require.True(t, f >= 0 && f <= 1, "value %v outside [0, 1]", f)
		seen[h] = true
	}
	require.Greater(t, len(seen), 32, "random values")

	// NumPy has no bfloat16: the printed summary says what ran.
	model = identityModel(t, graph.BFloat16, graph.ShapeOf(2, 64))
	code, stdout, errOut := cli(t, "run", model, "--device", "cpu")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `output y: bfloat16\[2 64\] min 0\.0\d* max 0\.9\d*`, stdout)
}
