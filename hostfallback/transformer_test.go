package hostfallback

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/opcases"
)

// TestTransformerOps runs the opset 23–24 transformer ops on the cases of
// testdata/opset24/gen.py and compares them with its numpy reference,
// within each op's tolerance.
func TestTransformerOps(t *testing.T) {
	cases, err := opcases.Load(filepath.Join("..", opcases.Dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			c := &Call{Node: tc.Node, Opset: tc.Opset, Out: make([]graph.Value, len(tc.Node.Outputs))}
			for _, in := range tc.Inputs {
				if in == nil {
					c.In = append(c.In, nil)
				} else {
					c.In = append(c.In, in)
				}
			}
			if err := Lookup(graph.DefaultDomain, tc.Node.OpType)(c); err != nil {
				t.Fatal(err)
			}
			tol := ops.Lookup(graph.DefaultDomain, tc.Node.OpType, tc.Opset).Tolerance()
			for i, want := range tc.Want {
				if want == nil {
					continue
				}
				got, _ := c.Out[i].(*graph.Tensor)
				if msg := opcases.Compare(got, want, tol); msg != "" {
					t.Errorf("output %d: %s", i, msg)
				}
			}
		})
	}
}

// TestTransformerOpErrors checks that inconsistent nodes and inputs are
// errors naming the node, not panics or wrong results.
func TestTransformerOpErrors(t *testing.T) {
	f := func(shape ...int64) *graph.Tensor { return graph.NewTensor(graph.Float, shape) }
	i64 := func(v ...int64) *graph.Tensor { return mvI64([]int64{int64(len(v))}, v...) }
	tests := []struct {
		name  string
		op    string
		attrs []*graph.Attribute
		in    []*graph.Tensor
	}{
		{"attention 3-D without heads", "Attention", nil, []*graph.Tensor{f(1, 2, 8), f(1, 2, 8), f(1, 2, 8)}},
		{"attention heads not dividing", "Attention", []*graph.Attribute{mvInt("q_num_heads", 3), mvInt("kv_num_heads", 2)},
			[]*graph.Tensor{f(1, 2, 6), f(1, 2, 4), f(1, 2, 4)}},
		{"attention q heads not a multiple", "Attention", nil, []*graph.Tensor{f(1, 3, 2, 4), f(1, 2, 2, 4), f(1, 2, 2, 4)}},
		{"attention ranks differ", "Attention", nil, []*graph.Tensor{f(1, 2, 2, 4), f(1, 2, 8), f(1, 2, 8)}},
		{"attention mask too long", "Attention", nil, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4), f(2, 4)}},
		{"attention mask heads", "Attention", nil, []*graph.Tensor{f(1, 2, 2, 4), f(1, 2, 3, 4), f(1, 2, 3, 4), f(3, 2, 3)}},
		{"attention past alone", "Attention", nil, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4), nil, f(1, 1, 2, 4)}},
		{"attention past head size", "Attention", nil, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4), nil, f(1, 1, 2, 5), f(1, 1, 2, 4)}},
		{"attention nonpad with past", "Attention", nil, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4), nil, f(1, 1, 2, 4), f(1, 1, 2, 4), i64(3)}},
		{"attention nonpad too long", "Attention", nil, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4), nil, nil, nil, i64(4)}},
		{"attention mode 4", "Attention", []*graph.Attribute{mvInt("qk_matmul_output_mode", 4)}, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4)}},
		{"attention softmax_precision int", "Attention", []*graph.Attribute{mvInt("softmax_precision", int64(graph.Int32))}, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4)}},
		{"attention negative scale", "Attention", []*graph.Attribute{mvFloat("scale", -1)}, []*graph.Tensor{f(1, 1, 2, 4), f(1, 1, 3, 4), f(1, 1, 3, 4)}},
		{"rms axis", "RMSNormalization", []*graph.Attribute{mvInt("axis", 3)}, []*graph.Tensor{f(2, 4), f(4)}},
		{"rms scale", "RMSNormalization", nil, []*graph.Tensor{f(2, 4), f(3)}},
		{"rotary 3-D without heads", "RotaryEmbedding", nil, []*graph.Tensor{f(1, 2, 8), f(1, 2, 4), f(1, 2, 4)}},
		{"rotary odd dim", "RotaryEmbedding", []*graph.Attribute{mvInt("rotary_embedding_dim", 3)}, []*graph.Tensor{f(1, 1, 2, 8), f(1, 2, 1), f(1, 2, 1)}},
		{"rotary cache shape", "RotaryEmbedding", nil, []*graph.Tensor{f(1, 1, 2, 8), f(1, 2, 3), f(1, 2, 4)}},
		{"rotary position out of range", "RotaryEmbedding", nil, []*graph.Tensor{f(1, 1, 2, 8), f(4, 4), f(4, 4), mvI64([]int64{1, 2}, 0, 4)}},
		{"scatter batch axis", "TensorScatter", []*graph.Attribute{mvInt("axis", 0)}, []*graph.Tensor{f(2, 4), f(1, 4)}},
		{"scatter mode", "TensorScatter", []*graph.Attribute{mvStr("mode", "ring")}, []*graph.Tensor{f(2, 4, 1), f(2, 1, 1)}},
		{"scatter overflow", "TensorScatter", []*graph.Attribute{mvInt("axis", 1)}, []*graph.Tensor{f(2, 4), f(2, 2), i64(0, 3)}},
		{"scatter update too long", "TensorScatter", []*graph.Attribute{mvInt("axis", 1)}, []*graph.Tensor{f(2, 4), f(2, 5)}},
		{"scatter indices", "TensorScatter", []*graph.Attribute{mvInt("axis", 1)}, []*graph.Tensor{f(2, 4), f(2, 1), i64(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := mvCall(tt.op, 24, tt.attrs, tt.in, []string{"y"})
			if err == nil {
				t.Fatalf("no error; outputs %v", c.Out)
			}
			if errors.Is(err, ErrUnsupported) {
				t.Fatalf("%v: an unsupported error for a bad node", err)
			}
			t.Log(err)
		})
	}
}

// TestTensorScatterEmpty scatters into caches with no elements: the
// output is the empty cache (a batch of 0 divided the prefixes by 0).
func TestTensorScatterEmpty(t *testing.T) {
	f := func(shape ...int64) *graph.Tensor { return graph.NewTensor(graph.Float, shape) }
	for _, in := range [][]*graph.Tensor{
		{f(0, 5, 4, 2), f(0, 5, 4, 2)},
		{f(0, 2, 3), f(0, 1, 3), graph.NewTensor(graph.Int64, []int64{0})},
		{f(2, 0, 3, 2), f(2, 0, 1, 2)},
	} {
		c, err := mvCall("TensorScatter", 24, []*graph.Attribute{mvStr("mode", "circular")}, in, []string{"y"})
		if err != nil {
			t.Fatalf("past%v update%v: %v", in[0].Shape, in[1].Shape, err)
		}
		if y := c.Out[0].(*graph.Tensor); !slices.Equal(y.Shape, in[0].Shape) {
			t.Errorf("past%v update%v: output%v", in[0].Shape, in[1].Shape, y.Shape)
		}
	}
}
