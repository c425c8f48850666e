package loader

import (
	"path/filepath"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// benchModel returns a model with 100 MiB of float32 weights in 25 tensors.
func benchModel(b *testing.B) *graph.Model {
	b.Helper()
	g := graph.NewGraph("g")
	for i := range 25 {
		name := "w" + string(rune('a'+i))
		g.Initializers[name] = graph.NewTensor(graph.Float, []int64{1024, 1024})
		g.Nodes = append(g.Nodes, &graph.Node{OpType: "Identity", Inputs: []string{name}, Outputs: []string{name + "_out"}, Index: i})
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: name + "_out"})
	}
	return &graph.Model{Name: "bench", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

func benchmarkLoad(b *testing.B, opts ...SaveOption) {
	path := filepath.Join(b.TempDir(), "m.onnx")
	if err := Save(benchModel(b), path, opts...); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(100 << 20)
	b.ResetTimer()
	for range b.N {
		m, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// BenchmarkLoadEmbedded loads 100 MiB of weights stored in the model file.
func BenchmarkLoadEmbedded(b *testing.B) { benchmarkLoad(b) }

// BenchmarkLoadExternal loads 100 MiB of weights from an external data file.
func BenchmarkLoadExternal(b *testing.B) {
	benchmarkLoad(b, WithExternalData("weights.bin", 1024, 0))
}
