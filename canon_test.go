package onnxvk_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/planner"
)

// canonCase is one old form of an op and the same computation written in
// the op's newest form.
type canonCase struct {
	name     string
	x        []int64 // the shape of input x (float32)
	old, new func() *graph.Model
	// op is the op the old node becomes.
	op string
	// gone are attributes the canonical node no longer has.
	gone []string
}

// canonModel returns a one-node model importing opset whose node reads x
// (float32 of shape xs) and the initializers inits, writing outs.
func canonModel(opset int64, xs []int64, n *graph.Node, inits map[string]*graph.Tensor) *graph.Model {
	g := graph.NewGraph("g")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(xs...))}}
	maps.Copy(g.Initializers, inits)
	n.Name = "n"
	g.Nodes = []*graph.Node{n}
	for _, o := range n.Outputs {
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o})
	}
	return &graph.Model{Name: fmt.Sprintf("%s-%d", n.OpType, opset), IRVersion: 8, Opsets: map[string]int64{"": opset}, Graph: g}
}

func canonNode(op string, in, out []string, attrs ...*graph.Attribute) *graph.Node {
	n := &graph.Node{OpType: op, Inputs: in, Outputs: out, Attrs: map[string]*graph.Attribute{}}
	for _, a := range attrs {
		n.Attrs[a.Name] = a
	}
	return n
}

func attrInts(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}

func attrFloat(name string, v float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
}

func attrInt(name string, v int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
}

func attrString(name, v string) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrString, S: []byte(v)}
}

func i64s(v ...int64) *graph.Tensor {
	t, _ := graph.FromSlice(graph.Int64, []int64{int64(len(v))}, v)
	return t
}

func f32s(v ...float32) *graph.Tensor {
	t, _ := graph.FromSlice(graph.Float, []int64{int64(len(v))}, v)
	return t
}

func f32(v float32) *graph.Tensor { return graph.Scalar(graph.Float, v) }

var canonCases = []canonCase{
	{name: "Clip-6", x: []int64{2, 5}, op: "Clip", gone: []string{"min", "max"},
		old: func() *graph.Model {
			return canonModel(6, []int64{2, 5}, canonNode("Clip", []string{"x"}, []string{"y"}, attrFloat("min", -0.5), attrFloat("max", 0.75)), nil)
		},
		new: func() *graph.Model {
			return canonModel(13, []int64{2, 5}, canonNode("Clip", []string{"x", "lo", "hi"}, []string{"y"}),
				map[string]*graph.Tensor{"lo": f32(-0.5), "hi": f32(0.75)})
		}},
	{name: "Clip-6 max only", x: []int64{7}, op: "Clip", gone: []string{"max"},
		old: func() *graph.Model {
			return canonModel(6, []int64{7}, canonNode("Clip", []string{"x"}, []string{"y"}, attrFloat("max", 0.25)), nil)
		},
		new: func() *graph.Model {
			return canonModel(13, []int64{7}, canonNode("Clip", []string{"x", "", "hi"}, []string{"y"}), map[string]*graph.Tensor{"hi": f32(0.25)})
		}},
	{name: "Pad-2", x: []int64{2, 3}, op: "Pad", gone: []string{"pads", "value"},
		old: func() *graph.Model {
			return canonModel(2, []int64{2, 3}, canonNode("Pad", []string{"x"}, []string{"y"}, attrInts("pads", 1, 0, 0, 2), attrFloat("value", 1.5)), nil)
		},
		new: func() *graph.Model {
			return canonModel(21, []int64{2, 3}, canonNode("Pad", []string{"x", "p", "v"}, []string{"y"}),
				map[string]*graph.Tensor{"p": i64s(1, 0, 0, 2), "v": f32(1.5)})
		}},
	{name: "Pad-1 reflect", x: []int64{3, 4}, op: "Pad", gone: []string{"paddings"},
		old: func() *graph.Model {
			return canonModel(1, []int64{3, 4}, canonNode("Pad", []string{"x"}, []string{"y"}, attrInts("paddings", 0, 2, 1, 1), attrString("mode", "reflect")), nil)
		},
		new: func() *graph.Model {
			return canonModel(21, []int64{3, 4}, canonNode("Pad", []string{"x", "p"}, []string{"y"}, attrString("mode", "reflect")),
				map[string]*graph.Tensor{"p": i64s(0, 2, 1, 1)})
		}},
	{name: "Upsample-7 nearest", x: []int64{1, 2, 3, 2}, op: "Resize", gone: []string{"scales"},
		old: func() *graph.Model {
			return canonModel(7, []int64{1, 2, 3, 2}, canonNode("Upsample", []string{"x"}, []string{"y"},
				&graph.Attribute{Name: "scales", Type: graph.AttrFloats, Floats: []float32{1, 1, 2, 3}}), nil)
		},
		new: func() *graph.Model {
			return canonModel(19, []int64{1, 2, 3, 2}, canonNode("Resize", []string{"x", "", "s"}, []string{"y"},
				attrString("coordinate_transformation_mode", "asymmetric"), attrString("nearest_mode", "floor")),
				map[string]*graph.Tensor{"s": f32s(1, 1, 2, 3)})
		}},
	{name: "Upsample-1 bilinear", x: []int64{1, 1, 2, 3}, op: "Resize", gone: []string{"height_scale", "width_scale"},
		old: func() *graph.Model {
			return canonModel(1, []int64{1, 1, 2, 3}, canonNode("Upsample", []string{"x"}, []string{"y"},
				attrFloat("height_scale", 2), attrFloat("width_scale", 1.5), attrString("mode", "bilinear")), nil)
		},
		new: func() *graph.Model {
			return canonModel(19, []int64{1, 1, 2, 3}, canonNode("Resize", []string{"x", "", "s"}, []string{"y"},
				attrString("coordinate_transformation_mode", "asymmetric"), attrString("mode", "linear")),
				map[string]*graph.Tensor{"s": f32s(1, 1, 2, 1.5)})
		}},
	{name: "Resize-10 downsample", x: []int64{1, 1, 4, 5}, op: "Resize",
		old: func() *graph.Model {
			return canonModel(10, []int64{1, 1, 4, 5}, canonNode("Resize", []string{"x", "s"}, []string{"y"}),
				map[string]*graph.Tensor{"s": f32s(1, 1, 0.6, 0.5)})
		},
		new: func() *graph.Model {
			return canonModel(19, []int64{1, 1, 4, 5}, canonNode("Resize", []string{"x", "", "s"}, []string{"y"},
				attrString("coordinate_transformation_mode", "asymmetric"), attrString("nearest_mode", "ceil")),
				map[string]*graph.Tensor{"s": f32s(1, 1, 0.6, 0.5)})
		}},
	{name: "ReduceMean-13", x: []int64{2, 3, 4}, op: "ReduceMean", gone: []string{"axes"},
		old: func() *graph.Model {
			return canonModel(13, []int64{2, 3, 4}, canonNode("ReduceMean", []string{"x"}, []string{"y"}, attrInts("axes", -1, 1)), nil)
		},
		new: func() *graph.Model {
			return canonModel(18, []int64{2, 3, 4}, canonNode("ReduceMean", []string{"x", "a"}, []string{"y"}), map[string]*graph.Tensor{"a": i64s(-1, 1)})
		}},
	{name: "ReduceSum-11", x: []int64{3, 4}, op: "ReduceSum", gone: []string{"axes"},
		old: func() *graph.Model {
			return canonModel(11, []int64{3, 4}, canonNode("ReduceSum", []string{"x"}, []string{"y"}, attrInts("axes", 0), attrInt("keepdims", 0)), nil)
		},
		new: func() *graph.Model {
			return canonModel(13, []int64{3, 4}, canonNode("ReduceSum", []string{"x", "a"}, []string{"y"}, attrInt("keepdims", 0)),
				map[string]*graph.Tensor{"a": i64s(0)})
		}},
	{name: "Split-11", x: []int64{2, 6}, op: "Split", gone: []string{"split"},
		old: func() *graph.Model {
			return canonModel(11, []int64{2, 6}, canonNode("Split", []string{"x"}, []string{"y", "z"}, attrInt("axis", 1), attrInts("split", 2, 4)), nil)
		},
		new: func() *graph.Model {
			return canonModel(18, []int64{2, 6}, canonNode("Split", []string{"x", "s"}, []string{"y", "z"}, attrInt("axis", 1)),
				map[string]*graph.Tensor{"s": i64s(2, 4)})
		}},
	{name: "Squeeze-11", x: []int64{1, 3, 1}, op: "Squeeze", gone: []string{"axes"},
		old: func() *graph.Model {
			return canonModel(11, []int64{1, 3, 1}, canonNode("Squeeze", []string{"x"}, []string{"y"}, attrInts("axes", 0)), nil)
		},
		new: func() *graph.Model {
			return canonModel(13, []int64{1, 3, 1}, canonNode("Squeeze", []string{"x", "a"}, []string{"y"}), map[string]*graph.Tensor{"a": i64s(0)})
		}},
	{name: "Unsqueeze-1", x: []int64{3, 2}, op: "Unsqueeze", gone: []string{"axes"},
		old: func() *graph.Model {
			return canonModel(1, []int64{3, 2}, canonNode("Unsqueeze", []string{"x"}, []string{"y"}, attrInts("axes", 0, 3)), nil)
		},
		new: func() *graph.Model {
			return canonModel(13, []int64{3, 2}, canonNode("Unsqueeze", []string{"x", "a"}, []string{"y"}), map[string]*graph.Tensor{"a": i64s(0, 3)})
		}},
	{name: "Slice-1", x: []int64{4, 5}, op: "Slice", gone: []string{"starts", "ends", "axes"},
		old: func() *graph.Model {
			return canonModel(1, []int64{4, 5}, canonNode("Slice", []string{"x"}, []string{"y"},
				attrInts("starts", 1, -4), attrInts("ends", 1000, 3), attrInts("axes", 1, 0)), nil)
		},
		new: func() *graph.Model {
			return canonModel(13, []int64{4, 5}, canonNode("Slice", []string{"x", "s", "e", "a"}, []string{"y"}),
				map[string]*graph.Tensor{"s": i64s(1, -4), "e": i64s(1000, 3), "a": i64s(1, 0)})
		}},
	{name: "TopK-1", x: []int64{3, 6}, op: "TopK", gone: []string{"k"},
		old: func() *graph.Model {
			return canonModel(1, []int64{3, 6}, canonNode("TopK", []string{"x"}, []string{"v", "i"}, attrInt("k", 4)), nil)
		},
		new: func() *graph.Model {
			return canonModel(11, []int64{3, 6}, canonNode("TopK", []string{"x", "k"}, []string{"v", "i"}), map[string]*graph.Tensor{"k": i64s(4)})
		}},
	{name: "Dropout-7 mask", x: []int64{2, 3}, op: "Dropout", gone: []string{"ratio", "is_test"},
		old: func() *graph.Model {
			return canonModel(7, []int64{2, 3}, canonNode("Dropout", []string{"x"}, []string{"y", "m"}, attrFloat("ratio", 0.25)), nil)
		},
		new: func() *graph.Model {
			m := canonModel(15, []int64{2, 3}, canonNode("Dropout", []string{"x", "r"}, []string{"y", "b"}), map[string]*graph.Tensor{"r": f32(0.25)})
			m.Graph.Nodes = append(m.Graph.Nodes, canonNode("CastLike", []string{"b", "x"}, []string{"m"}))
			m.Graph.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "m"}}
			return m
		}},
	{name: "Dropout-6", x: []int64{4}, op: "Dropout", gone: []string{"is_test"},
		old: func() *graph.Model {
			return canonModel(6, []int64{4}, canonNode("Dropout", []string{"x"}, []string{"y"}, attrInt("is_test", 1)), nil)
		},
		new: func() *graph.Model {
			return canonModel(13, []int64{4}, canonNode("Dropout", []string{"x"}, []string{"y"}), nil)
		}},
}

// TestCanonicalForms runs each old form of an op and the same computation
// written in the op's newest form on the CPU and on Vulkan: the outputs
// are equal bit for bit, the nodes run on the same devices, and the old
// node has become the new form, recording the newest version.
func TestCanonicalForms(t *testing.T) {
	for _, device := range []string{"cpu", "vulkan"} {
		for _, c := range canonCases {
			t.Run(device+"/"+c.name, func(t *testing.T) {
				open := func(m *graph.Model) *onnxvk.Session {
					if device == "vulkan" {
						return vulkanSession(t, m)
					}
					s, err := onnxvk.NewSession(m, onnxvk.WithDevice("cpu"))
					require.NoError(t, err)
					t.Cleanup(func() { s.Close() })
					return s
				}
				oldM := c.old()
				oldS, newS := open(oldM), open(c.new())
				n := oldM.Graph.Nodes[slices.IndexFunc(oldM.Graph.Nodes, func(n *graph.Node) bool { return n.Name == "n" })]
				require.Equal(t, c.op, n.OpType)
				require.Equal(t, ops.Newest(c.op), n.Opset)
				for _, a := range c.gone {
					require.Nil(t, n.Attr(a), "attribute %s", a)
				}
				rng := rand.New(rand.NewPCG(7, 1))
				data := make([]float32, graph.NumElements(c.x))
				for i := range data {
					data[i] = 2*rng.Float32() - 1
				}
				x, err := onnxvk.NewTensor(c.x, data)
				require.NoError(t, err)
				want, err := newS.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
				require.NoError(t, err)
				got, err := oldS.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
				require.NoError(t, err)
				require.Equal(t, len(want), len(got))
				for name, w := range want {
					require.Equal(t, w.Shape(), got[name].Shape(), name)
					require.Equal(t, w.Bytes(), got[name].Bytes(), name)
				}
				require.Equal(t, computeDevices(t, newS), computeDevices(t, oldS))
			})
		}
	}
}

// computeDevices lists the device of each compute step of the session's
// plan by op.
func computeDevices(t *testing.T, s *onnxvk.Session) map[string]string {
	p, err := sessionvalues.Of(s).Plan(nil)
	require.NoError(t, err)
	devs := map[string]string{}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute {
			devs[st.Node.OpType] = st.Device
		}
	}
	return devs
}
