package hostfallback

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
)

// panicDomain holds the test op Panic, whose kernel panics: on the calling
// goroutine, or with attribute chunk set, in a chunk of a ParallelFor that
// a pool worker may run.
const panicDomain = "onnxvk.test"

func init() {
	RegisterDomain(panicDomain, "Panic", func(c *Call) error {
		if c.Node.Attrs["chunk"] != nil {
			(*Threads)(nil).For(64, 1, func(lo, _ int) {
				if lo > 0 {
					panic("test panic in a chunk")
				}
			})
		}
		panic("test panic")
	})
}

// TestKernelPanicIsError runs the Panic kernel directly and inside the
// bodies of If, Loop and Scan: each time the panic comes back as an error
// naming the node that panicked.
func TestKernelPanicIsError(t *testing.T) {
	boom := func(attrs ...any) *graph.Node {
		n := cfNode("Panic", []string{"x"}, []string{"y"}, attrs...)
		n.Name, n.Domain = "boom", panicDomain
		return n
	}
	x := cfF32(t, []int64{2}, 1, 2)
	for _, n := range []*graph.Node{boom(), boom("chunk", int64(1))} {
		c := &Call{Node: n, In: []graph.Value{x}, Out: make([]graph.Value, 1)}
		err := Lookup(panicDomain, "Panic")(c)
		require.ErrorContains(t, err, n.String()+": kernel panic: test panic")
	}
	outer := map[string]graph.Value{"x": x}
	body := func(ins, outs []string) *graph.Graph {
		return cfGraph(ins, outs, map[string]*graph.Type{"cond": graph.TensorType(graph.Bool, graph.Shape{})}, boom())
	}
	branch := body(nil, []string{"y"})
	cases := []struct {
		n    *graph.Node
		opst int64
		in   []graph.Value
	}{
		{cfNode("If", []string{"c"}, []string{"out"}, "then_branch", branch, "else_branch", branch), 16,
			[]graph.Value{graph.Scalar(graph.Bool, true)}},
		{cfNode("Loop", []string{"M", "cond"}, []string{"scan"}, "body", body([]string{"i", "cond"}, []string{"cond", "y"})), 16,
			[]graph.Value{graph.Scalar(graph.Int64, int64(3)), graph.Scalar(graph.Bool, true)}},
		{cfNode("Scan", []string{"x"}, []string{"ys"}, "body", body([]string{"s"}, []string{"y"}), "num_scan_inputs", int64(1)), 11,
			[]graph.Value{x}},
	}
	for _, tc := range cases {
		_, err := cfRun(t, tc.n, tc.opst, 1, outer, tc.in...)
		require.ErrorContains(t, err, `node "boom" (onnxvk.test.Panic, #0): kernel panic: test panic`, tc.n.OpType)
	}
}
