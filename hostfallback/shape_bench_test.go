package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// mvBench times op on the inputs, allocating its output each time as the
// executor without an arena does.
func mvBench(b *testing.B, op string, opset int64, attrs []*graph.Attribute, in ...*graph.Tensor) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mvCall(op, opset, attrs, in, []string{"y"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTransposeNCHWToNHWC(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(8, 64, 56, 56))
	b.SetBytes(int64(len(x.Data)))
	mvBench(b, "Transpose", 13, []*graph.Attribute{mvInts("perm", 0, 2, 3, 1)}, x)
}
func BenchmarkTransposeGeneral(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(16, 32, 24, 40))
	b.SetBytes(int64(len(x.Data)))
	mvBench(b, "Transpose", 13, []*graph.Attribute{mvInts("perm", 3, 1, 0, 2)}, x)
}
func BenchmarkTransposeBlock(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(8, 12, 128, 64))
	b.SetBytes(int64(len(x.Data)))
	mvBench(b, "Transpose", 13, []*graph.Attribute{mvInts("perm", 0, 2, 1, 3)}, x)
}
func BenchmarkResizeLinear(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(1, 64, 128, 128))
	b.SetBytes(int64(len(x.Data)))
	mvBench(b, "Resize", 13, []*graph.Attribute{mvStr("mode", "linear")}, x, nil, mvF32(mvShape(4), 1, 1, 2, 2))
}
func BenchmarkResizeNearest(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(1, 64, 128, 128))
	b.SetBytes(int64(len(x.Data)))
	mvBench(b, "Resize", 13, nil, x, nil, mvF32(mvShape(4), 1, 1, 2, 2))
}
func BenchmarkGatherRows(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(30000, 512))
	idx := make([]int64, 4096)
	for i := range idx {
		idx[i] = int64(i*7919) % 30000
	}
	b.SetBytes(4096 * 512 * 4)
	mvBench(b, "Gather", 13, nil, x, mvI64(mvShape(4096), idx...))
}
func BenchmarkGatherLastAxis(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(4096, 512))
	idx := make([]int64, 256)
	for i := range idx {
		idx[i] = int64(i*37) % 512
	}
	b.SetBytes(4096 * 256 * 4)
	mvBench(b, "Gather", 13, []*graph.Attribute{mvInt("axis", 1)}, x, mvI64(mvShape(256), idx...))
}
func BenchmarkConcat(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(8, 64, 56, 56))
	b.SetBytes(2 * int64(len(x.Data)))
	mvBench(b, "Concat", 13, []*graph.Attribute{mvInt("axis", 1)}, x, x)
}
func BenchmarkSliceStep(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(8, 64, 112, 112))
	b.SetBytes(int64(len(x.Data)) / 4)
	mvBench(b, "Slice", 13, nil, x, mvI64(mvShape(2), 0, 0), mvI64(mvShape(2), 1000, 1000), mvI64(mvShape(2), 2, 3), mvI64(mvShape(2), 2, 2))
}
func BenchmarkTopK(b *testing.B) {
	x := graph.NewTensor(graph.Float, mvShape(8, 20000))
	v := graph.View[float32](x)
	for i := range v {
		v[i] = float32((i * 7919) % 10007)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mvCall("TopK", 11, nil, []*graph.Tensor{x, mvI64(mvShape(1), 100)}, []string{"v", "i"}); err != nil {
			b.Fatal(err)
		}
	}
}
