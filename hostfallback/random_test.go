package hostfallback

import (
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestRandomUniform(t *testing.T) {
	attrs := ewWith(ewInts("shape", 3, 50), ewFloat("low", 2), ewFloat("high", 3), ewFloat("seed", 1), ewInt("dtype", int64(graph.Double)))
	y := ewRun(t, "RandomUniform", 1, attrs)
	if y.DType != graph.Double || !slices.Equal(y.Shape, []int64{3, 50}) {
		t.Fatalf("got %s%v", y.DType, y.Shape)
	}
	for _, v := range ewValues(y) {
		if v < 2 || v >= 3 {
			t.Fatalf("value %v outside [2, 3)", v)
		}
	}
	again := ewRun(t, "RandomUniform", 1, attrs)
	if !slices.Equal(ewValues(y), ewValues(again)) {
		t.Error("a seeded generator gave different values")
	}
	like := ewRun(t, "RandomUniformLike", 1, nil, ewT(graph.Float16, ewShape(4), uint16(0), 0, 0, 0))
	if like.DType != graph.Float16 || !slices.Equal(like.Shape, []int64{4}) {
		t.Errorf("like: %s%v", like.DType, like.Shape)
	}
	ewFails(t, "RandomUniform", 1, nil)
	ewFails(t, "RandomUniform", 1, ewWith(ewInts("shape", 2), ewInt("dtype", int64(graph.Int32))))
}

func TestRandomNormal(t *testing.T) {
	y := ewRun(t, "RandomNormal", 1, ewWith(ewInts("shape", 10000), ewFloat("mean", 5), ewFloat("scale", 0.5), ewFloat("seed", 3)))
	sum, sq := 0.0, 0.0
	for _, v := range ewValues(y) {
		sum += v
		sq += v * v
	}
	mean := sum / 10000
	std := sq/10000 - mean*mean
	if mean < 4.95 || mean > 5.05 || std < 0.2 || std > 0.3 {
		t.Errorf("mean %v variance %v, want about 5 and 0.25", mean, std)
	}
	y = ewRun(t, "RandomNormalLike", 1, ewWith(ewInt("dtype", int64(graph.Double))), ewF32(ewShape(2, 2), 0, 0, 0, 0))
	if y.DType != graph.Double || !slices.Equal(y.Shape, []int64{2, 2}) {
		t.Errorf("like: %s%v", y.DType, y.Shape)
	}
}

func TestBernoulli(t *testing.T) {
	p := xF64(ewShape(4), 0, 1, 0, 1)
	y := ewRun(t, "Bernoulli", 15, nil, p)
	ewCheck(t, "certain", y, graph.Double, ewShape(4), []float64{0, 1, 0, 1}, 0)
	y = ewRun(t, "Bernoulli", 15, ewWith(ewInt("dtype", int64(graph.Bool))), p)
	ewCheck(t, "bool", y, graph.Bool, ewShape(4), []float64{0, 1, 0, 1}, 0)
	ewFails(t, "Bernoulli", 15, nil, xI64(ewShape(1), 1))
}

func TestMultinomial(t *testing.T) {
	// Row 0 puts all mass on class 2, row 1 on class 0.
	x := ewF32(ewShape(2, 3), -1e9, -1e9, 0, 0, -1e9, -1e9)
	y := ewRun(t, "Multinomial", 7, ewWith(ewInt("sample_size", 3), ewInt("dtype", int64(graph.Int64))), x)
	ewCheck(t, "samples", y, graph.Int64, ewShape(2, 3), []float64{2, 2, 2, 0, 0, 0}, 0)
	y = ewRun(t, "Multinomial", 7, ewWith(ewFloat("seed", 5)), ewF32(ewShape(1, 2), 0, 0))
	if y.DType != graph.Int32 || !slices.Equal(y.Shape, []int64{1, 1}) {
		t.Errorf("default: %s%v", y.DType, y.Shape)
	}
	ewFails(t, "Multinomial", 7, nil, ewF32(ewShape(3), 0, 0, 0))
}
