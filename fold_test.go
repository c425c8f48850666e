package onnxvk_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
)

// TestFoldingMatchesRunTime plans one node over constants with constant
// folding and without: the folded plan must give what the kernel
// computes at run time, bit for bit, and fail where it fails.
func TestFoldingMatchesRunTime(t *testing.T) {
	f32 := func(v float32) *graph.Tensor { return graph.Scalar(graph.Float, v) }
	i64 := func(v int64) *graph.Tensor { return graph.Scalar(graph.Int64, v) }
	f16 := func(v float32) *graph.Tensor { return graph.Scalar(graph.Float16, float16.Fromfloat32(v).Bits()) }
	for _, tc := range []struct {
		name   string
		op     string
		inputs []*graph.Tensor
		attrs  []*graph.Attribute
		// fails says that loading or running must fail (and folding fold
		// nothing).
		fails bool
	}{
		{name: "Range float32 steps", op: "Range", inputs: []*graph.Tensor{f32(0.1), f32(3.3), f32(0.1)}},
		{name: "Range float16", op: "Range", inputs: []*graph.Tensor{f16(0), f16(3), f16(1)}, fails: true},
		{name: "Range too long", op: "Range", inputs: []*graph.Tensor{i64(-1 << 62), i64(1 << 62), i64(1)}, fails: true},
		{name: "Range whole int64 span", op: "Range", inputs: []*graph.Tensor{i64(math.MinInt64), i64(math.MaxInt64), i64(1 << 62)}},
		{name: "Range delta 0", op: "Range", inputs: []*graph.Tensor{i64(0), i64(4), i64(0)}, fails: true},
		{name: "Range infinite", op: "Range", inputs: []*graph.Tensor{f32(0), f32(float32(math.Inf(1))), f32(1)}, fails: true},
		{name: "Range NaN", op: "Range", inputs: []*graph.Tensor{f32(0), f32(4), f32(float32(math.NaN()))}, fails: true},
		{name: "Cast out of range to int64", op: "Cast", inputs: []*graph.Tensor{floats([]int64{4}, 1e30, float32(math.NaN()), -1e30, -3.9)},
			attrs: []*graph.Attribute{{Name: "to", Type: graph.AttrInt, I: int64(graph.Int64)}}},
		{name: "Cast out of range to int32", op: "Cast", inputs: []*graph.Tensor{floats([]int64{3}, 3e9, -3e9, 2.5)},
			attrs: []*graph.Attribute{{Name: "to", Type: graph.AttrInt, I: int64(graph.Int32)}}},
		{name: "Div int64 by 0", op: "Div", inputs: []*graph.Tensor{ints(7, -7), ints(0, 2)}, fails: true},
		{name: "Div int64 truncates", op: "Div", inputs: []*graph.Tensor{ints(7, -7, math.MinInt64), ints(2, 2, -1)}},
		{name: "Mod int64", op: "Mod", inputs: []*graph.Tensor{ints(7, -7, 7, -7), ints(3, 3, -3, -3)}},
		{name: "Pow float", op: "Pow", inputs: []*graph.Tensor{floats([]int64{3}, 2, -8, 10), floats([]int64{3}, 0.5, 1.0/3, 38.5)}},
		{name: "Sqrt", op: "Sqrt", inputs: []*graph.Tensor{floats([]int64{3}, 2, -1, 1e-40)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sm := sizeModel{inits: map[string]*graph.Tensor{}, outputs: []string{"y"}}
			n := &graph.Node{Name: "node", OpType: tc.op, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{}}
			for i, in := range tc.inputs {
				name := string(rune('a' + i))
				sm.inits[name] = in
				n.Inputs = append(n.Inputs, name)
			}
			for _, a := range tc.attrs {
				n.Attrs[a.Name] = a
			}
			sm.nodes = []*graph.Node{n}
			var outs [2]map[string]*onnxvk.Tensor
			for k, opts := range [][]onnxvk.Option{{onnxvk.WithDevice("cpu")}, {onnxvk.WithDevice("cpu"), onnxvk.WithoutConstantFolding()}} {
				sess, err := onnxvk.NewSession(sm.model(), opts...)
				if tc.fails && err != nil {
					continue
				}
				require.NoError(t, err)
				defer sess.Close()
				if k == 0 {
					p, err := sessionvalues.Of(sess).Plan(nil)
					if tc.fails {
						if err == nil {
							require.Zero(t, p.Folded, "a node the kernel refuses folded")
						}
					} else {
						require.NoError(t, err)
						require.Equal(t, 1, p.Folded, "the node did not fold")
					}
				}
				outs[k], err = sess.Run(context.Background(), nil)
				if tc.fails {
					require.Error(t, err, "a Run with folding %v succeeded", k == 0)
				} else {
					require.NoError(t, err)
				}
			}
			if !tc.fails {
				folded, ran := outs[0]["y"], outs[1]["y"]
				require.Equal(t, ran.Shape(), folded.Shape())
				require.Equal(t, ran.Bytes(), folded.Bytes(), "folded %v, run time %v", folded, ran)
			}
		})
	}
}
