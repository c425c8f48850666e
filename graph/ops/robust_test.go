package ops

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// TestRulesNeverPanic runs every inference rule on malformed and partial
// inputs: unknown types, scalars, unknown ranks, odd attribute values and
// values of the wrong size. A rule may return an error but must not panic.
func TestRulesNeverPanic(t *testing.T) {
	types := []*graph.Type{
		nil,
		graph.TensorType(graph.Float, nil),
		f32(),
		f32(0),
		f32(3),
		f32("N", 3),
		f32(2, 3, 4),
		f32(1, 2, 3, 4),
		f32(1, "C", "H", 5, 6),
		graph.TensorType(graph.Int64, shp(2)),
		graph.TensorType(graph.Int64, shp()),
		graph.TensorType(graph.Bool, shp(3)),
		{Kind: graph.SequenceKind, Inner: f32(2)},
		{Kind: graph.OptionalKind, Inner: f32(2)},
	}
	values := []*graph.Tensor{nil, i64s(), i64s(-1), i64s(0, -1), i64s(5, 5, 5, 5, 5, 5, 5, 5), int64Tensor(nil, []int64{-7}),
		mustFloats(0.5, 2), graph.Scalar(graph.Bool, true)}
	attrSets := [][]*graph.Attribute{
		nil,
		{intAttr("axis", 9), intAttr("keepdims", 0), ints("axes", 5, -9), ints("perm", 0, 0)},
		{intAttr("axis", -1), ints("kernel_shape", 3, 3), ints("strides", 0, 1), ints("pads", 1), strAttr("auto_pad", "BOGUS")},
		{ints("kernel_shape", 2), ints("split", -1, 2), intAttr("num_outputs", 0), intAttr("blocksize", 0),
			intAttr("to", 99), strAttr("equation", "ab,bc->ac"), intAttr("hidden_size", -3), intAttr("group", 0)},
		{&graph.Attribute{Name: "value", Type: graph.AttrTensor, T: i64s(1, 2)}, ints("output_shape", 1),
			ints("output_padding", 1, 2, 3), strAttr("equation", "..."), intAttr("num_scan_inputs", 7)},
	}
	mu.RLock()
	var all []*Schema
	for _, versions := range registry {
		all = append(all, versions...)
	}
	mu.RUnlock()
	for _, s := range all {
		if s.Infer == nil {
			continue
		}
		for ai, attrs := range attrSets {
			for n := range 4 {
				for ti := range types {
					for vi := range 2 {
						in := make([]*graph.Type, n)
						vals := make([]*graph.Tensor, n)
						for k := range n {
							in[k] = types[(ti+k*3)%len(types)]
							vals[k] = values[(ti+vi*3+k)%len(values)]
						}
						runRobust(t, s, attrs, in, vals, fmt.Sprintf("%s-%d attrs#%d in %v", s.Name, s.Since, ai, in))
					}
				}
			}
		}
	}
}

func runRobust(t *testing.T, s *Schema, attrs []*graph.Attribute, in []*graph.Type, vals []*graph.Tensor, what string) {
	t.Helper()
	n := &graph.Node{Name: "n", OpType: s.Name, Domain: s.Domain, Attrs: map[string]*graph.Attribute{}}
	for i := range in {
		n.Inputs = append(n.Inputs, fmt.Sprint("i", i))
	}
	n.Outputs = []string{"o0", "o1", "o2"}
	for _, a := range attrs {
		n.Attrs[a.Name] = a
	}
	c := &InferContext{Node: n, Opset: s.Since, InTypes: in, InValues: vals,
		OutTypes: make([]*graph.Type, 3), OutValues: make([]*graph.Tensor, 3),
		Subgraph: func(*graph.Graph, []*graph.Type) ([]*graph.Type, error) { return []*graph.Type{nil, nil}, nil }}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: panic: %v\n%s", what, r, debug.Stack())
		}
	}()
	_ = s.Infer(c)
}
