package vulkan

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// TestStagedIO runs nodes with the inputs and outputs going through a
// staging buffer and copies recorded in the command buffer, the path of a
// discrete GPU, which lavapipe's unified memory would otherwise skip: a
// MatMul with a resident weight, and an Identity, which is a view of its
// input (the same io range copied in and out).
func TestStagedIO(t *testing.T) {
	d := openTest(t)
	mapIO = func(*buffer) bool { return false }
	t.Cleanup(func() { mapIO = (*buffer).hostReadable })
	cases := []struct {
		n   *graph.Node
		ins []input
	}{
		{&graph.Node{OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}, []input{{shape: []int64{5, 33}}, {shape: []int64{33, 7}, weight: true}}},
		{&graph.Node{OpType: "Identity", Inputs: []string{"x"}, Outputs: []string{"y"}}, []input{{shape: []int64{3, 13}}}},
	}
	for i, c := range cases {
		gpu, cpu, ok := runBoth(t, d, c.n, 17, c.ins, uniform(-2, 2), uint64(i))
		if !ok {
			t.Fatalf("%s unsupported", c.n.OpType)
		}
		compare(t, c.n.OpType+" through staging", gpu, cpu, ops.Lookup("", c.n.OpType, 17).Tolerance())
	}
	staged := 0
	for _, pr := range d.programs {
		for _, ec := range pr.all {
			if ec.stage != nil {
				staged++
			}
		}
	}
	if staged != len(cases) {
		t.Errorf("%d contexts used a staging buffer, want %d", staged, len(cases))
	}
}
