package example_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/example"
	"github.com/onnxvk/onnxvk/internal/example/reference"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader"
)

// TestGeneratedFilesUpToDate regenerates the example into a temporary folder
// and checks that the embedded files match: the model byte for byte, the
// picture pixel for pixel (PNG bytes depend on the Go version's compressor).
func TestGeneratedFilesUpToDate(t *testing.T) {
	testenv.SkipShort(t, "builds and runs the generator")
	goTool, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, "no go command to run the generator: "+err.Error())
	}
	dir := t.TempDir()
	cmd := exec.Command(goTool, "run", "./gen", "-out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, out)
	}
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(model, example.Model()) {
		t.Error("model.onnx is stale: run go generate in internal/example")
	}
	pic, err := os.ReadFile(filepath.Join(dir, "picture.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pic))
	if err != nil {
		t.Fatal(err)
	}
	if !samePixels(img, example.Picture()) {
		t.Error("picture.png is stale: run go generate in internal/example")
	}
}

func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.RGBAModel.Convert(a.At(x, y)) != color.RGBAModel.Convert(b.At(x, y)) {
				return false
			}
		}
	}
	return true
}

// TestModelDeclaresSymbolicImage checks that the model loads and takes and
// returns images of any size.
func TestModelDeclaresSymbolicImage(t *testing.T) {
	m, err := loader.LoadBytes(example.Model(), "example")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g := m.Graph
	if len(g.Inputs) != 1 || len(g.Outputs) != 1 {
		t.Fatalf("%d inputs and %d outputs, want 1 and 1", len(g.Inputs), len(g.Outputs))
	}
	for _, c := range []struct {
		vi   *graph.ValueInfo
		name string
		want string
	}{{g.Inputs[0], "image", "float32[1 3 H W]"}, {g.Outputs[0], "edges", "float32[1 1 H W]"}} {
		if c.vi.Name != c.name || c.vi.Type.String() != c.want {
			t.Errorf("got %s %s, want %s %s", c.vi.Name, c.vi.Type, c.name, c.want)
		}
	}
}

func TestModelIsACopy(t *testing.T) {
	m := example.Model()
	m[0] ^= 0xff
	if bytes.Equal(m, example.Model()) {
		t.Error("Model returned the embedded bytes, not a copy")
	}
}

func TestInput(t *testing.T) {
	in := example.Input()
	if in.DType != graph.Float || !equalShape(in.Shape, []int64{1, 3, 128, 192}) {
		t.Fatalf("input is %s%v, want float32[1 3 128 192]", in.DType, in.Shape)
	}
	px := graph.View[float32](in)
	for i, v := range px {
		if v < 0 || v > 1 {
			t.Fatalf("value %d is %g, outside 0..1", i, v)
		}
	}
	// The top-left pixel is sky: RGB 100, 160, 230.
	plane := 128 * 192
	got := [3]float32{px[0], px[plane], px[2*plane]}
	if want := [3]float32{100. / 255, 160. / 255, 230. / 255}; got != want {
		t.Errorf("top-left pixel %v, want %v", got, want)
	}
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestImageFromTensorRoundTrip(t *testing.T) {
	img, err := example.ImageFromTensor(example.Input())
	if err != nil {
		t.Fatal(err)
	}
	if !samePixels(img, example.Picture()) {
		t.Error("ImageFromTensor(Input()) differs from Picture()")
	}
}

func TestImageFromTensorGrayClamps(t *testing.T) {
	nan := float32(math.NaN())
	in, err := graph.FromSlice(graph.Float, []int64{1, 2, 3}, []float32{-1, 0, 0.5, 1, 2, nan})
	if err != nil {
		t.Fatal(err)
	}
	img, err := example.ImageFromTensor(in)
	if err != nil {
		t.Fatal(err)
	}
	gray, ok := img.(*image.Gray)
	if !ok {
		t.Fatalf("got a %T, want *image.Gray", img)
	}
	if want := []uint8{0, 0, 128, 255, 255, 0}; !bytes.Equal(gray.Pix, want) || gray.Bounds().Dx() != 3 {
		t.Errorf("pixels %v, want %v in 3 columns", gray.Pix, want)
	}
}

func TestImageFromTensorErrors(t *testing.T) {
	short := graph.NewTensor(graph.Float, []int64{1, 1, 2, 2})
	short.Data = short.Data[:8]
	for name, in := range map[string]*graph.Tensor{
		"nil":        nil,
		"int":        graph.NewTensor(graph.Int32, []int64{1, 1, 2, 2}),
		"2 channels": graph.NewTensor(graph.Float, []int64{1, 2, 2, 2}),
		"batch 2":    graph.NewTensor(graph.Float, []int64{2, 1, 2, 2}),
		"rank 2":     graph.NewTensor(graph.Float, []int64{2, 2}),
		"empty":      graph.NewTensor(graph.Float, []int64{1, 0, 2}),
		"short data": short,
	} {
		if _, err := example.ImageFromTensor(in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestRunOnCPU runs the example on the CPU and checks the output against a
// plain Go computation, and that it looks as Description says: bright on
// the outlines, black in flat regions.
func TestRunOnCPU(t *testing.T) {
	sess, err := onnxvk.LoadBytes(example.Model(), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	in := example.Input()
	out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"image": onnxvk.TensorFrom(in)})
	if err != nil {
		t.Fatal(err)
	}
	edges := out["edges"]
	if edges == nil {
		t.Fatalf("no output named edges in %v", out)
	}
	got := edges.Graph()
	if got.DType != graph.Float || !equalShape(got.Shape, []int64{1, 1, 128, 192}) {
		t.Fatalf("edges is %s%v, want float32[1 1 128 192]", got.DType, got.Shape)
	}
	want := reference.Edges(in)
	e := graph.View[float32](got)
	at := func(x, y int) float64 { return float64(e[y*192+x]) }
	var maxDiff float64
	for y := range 128 {
		for x := range 192 {
			maxDiff = max(maxDiff, math.Abs(at(x, y)-want[y][x]))
		}
	}
	t.Logf("max abs difference from the Go reference: %.3g", maxDiff)
	if maxDiff > 1e-5 {
		t.Errorf("max abs difference from the Go reference %.3g > 1e-5", maxDiff)
	}

	// Strong edges: crossing the house's left wall, the roof's left slope,
	// the door's right side and the grass line under the tree.
	for _, seg := range []struct {
		name           string
		x0, y0, dx, dy int
	}{
		{"left wall", 36, 85, 1, 0},
		{"roof", 44, 46, 1, 0},
		{"door", 72, 90, 1, 0},
		{"grass line", 160, 96, 0, 1},
	} {
		var peak float64
		for i := range 9 {
			peak = max(peak, at(seg.x0+i*seg.dx, seg.y0+i*seg.dy))
		}
		if peak < 0.3 {
			t.Errorf("%s: strongest edge %.3f, want >= 0.3", seg.name, peak)
		}
	}
	// Flat regions: sky, the wall beside the door, the grass.
	for _, p := range []struct {
		name string
		x, y int
	}{{"sky", 110, 40}, {"wall", 88, 92}, {"grass", 20, 115}, {"image corner", 2, 2}} {
		for y := p.y - 2; y <= p.y+2; y++ {
			for x := p.x - 2; x <= p.x+2; x++ {
				if v := at(x, y); v > 1e-3 {
					t.Errorf("%s: edge %.4f at (%d,%d), want ~0", p.name, v, x, y)
				}
			}
		}
	}
}
