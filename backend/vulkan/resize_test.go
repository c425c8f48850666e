package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/planner"
)

// resizeScales are input shapes with scales for every axis: upsampling,
// downsampling, odd ratios, only some axes resized, rank 1 to 5.
var resizeScales = []struct {
	shape  []int64
	scales []float32
}{
	{[]int64{1, 1, 4, 4}, []float32{1, 1, 2, 2}},
	{[]int64{2, 3, 13, 7}, []float32{1, 1, 0.5, 3}},
	{[]int64{1, 2, 5, 6}, []float32{1, 1, 1.7, 0.6}},
	{[]int64{13}, []float32{3}},
	{[]int64{127}, []float32{0.33}},
	{[]int64{3, 5, 7}, []float32{1, 2.5, 1}},
	{[]int64{1, 2, 3, 4, 5}, []float32{1, 1, 2, 1.5, 0.8}},
	{[]int64{2, 1, 3, 5}, []float32{1, 1, 1, 4}},
}

// TestResizeMatchesCPU checks Resize against the CPU kernel in every
// mode, coordinate transformation and nearest rounding, with scales.
func TestResizeMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(5, 9))
	coords := []string{"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"}
	for _, c := range resizeScales {
		for _, coord := range coords {
			for _, mode := range []string{"nearest", "linear", "cubic"} {
				nearests := []string{"round_prefer_floor"}
				if mode == "nearest" {
					nearests = []string{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
				}
				for _, nm := range nearests {
					opset := int64(13)
					if coord == "tf_half_pixel_for_nn" {
						opset = 11
					} else if coord == "half_pixel_symmetric" {
						opset = 19
					}
					n := kerneltest.ResizeNode(false, true, false, map[string]any{"mode": mode, "coordinate_transformation_mode": coord, "nearest_mode": nm})
					kerneltest.Check(t, d, fmt.Sprintf("Resize-%d %v %v %s %s %s", opset, c.shape, c.scales, mode, coord, nm), kerneltest.Case{Node: n, Opset: opset, Args: []kerneltest.Arg{{T: kerneltest.RandFloats(r, c.shape, -1, 1)}, {}, kerneltest.ConstFloats(c.scales...)}})
				}
			}
		}
	}
}

// TestResizeVariantsMatchCPU checks Resize-10, sizes with each
// keep_aspect_ratio_policy and axes, tf_crop_and_resize with its roi and
// extrapolation value and the cubic attributes.
func TestResizeVariantsMatchCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(6, 9))
	x := func(shape ...int64) kerneltest.Arg { return kerneltest.Arg{T: kerneltest.RandFloats(r, shape, -1, 1)} }
	for _, c := range resizeScales {
		for _, mode := range []string{"nearest", "linear"} {
			n := &graph.Node{OpType: "Resize", Inputs: []string{"x", "scales"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{
				"mode": {Name: "mode", Type: graph.AttrString, S: []byte(mode)}}}
			kerneltest.Check(t, d, fmt.Sprintf("Resize-10 %v %v %s", c.shape, c.scales, mode), kerneltest.Case{Node: n, Opset: 10, Args: []kerneltest.Arg{x(c.shape...), kerneltest.ConstFloats(c.scales...)}})
		}
	}
	for _, policy := range []string{"stretch", "not_larger", "not_smaller"} {
		for _, mode := range []string{"nearest", "linear", "cubic"} {
			n := kerneltest.ResizeNode(false, false, true, map[string]any{"mode": mode, "keep_aspect_ratio_policy": policy})
			kerneltest.Check(t, d, fmt.Sprintf("Resize-18 sizes %s %s", policy, mode), kerneltest.Case{Node: n, Opset: 18, Args: []kerneltest.Arg{x(2, 3, 13, 7), {}, {}, kerneltest.ConstInts(2, 3, 20, 5)}})
			n = kerneltest.ResizeNode(false, false, true, map[string]any{"mode": mode, "keep_aspect_ratio_policy": policy, "axes": []int64{-1, 1}})
			kerneltest.Check(t, d, fmt.Sprintf("Resize-19 sizes axes %s %s", policy, mode), kerneltest.Case{Node: n, Opset: 19, Args: []kerneltest.Arg{x(2, 5, 3, 7), {}, {}, kerneltest.ConstInts(11, 3)}})
		}
		n := kerneltest.ResizeNode(false, true, false, map[string]any{"mode": "linear", "axes": []int64{2}})
		kerneltest.Check(t, d, "Resize-18 scales axes", kerneltest.Case{Node: n, Opset: 18, Args: []kerneltest.Arg{x(3, 1, 13), {}, kerneltest.ConstFloats(2.5)}})
	}
	for _, mode := range []string{"nearest", "linear", "cubic"} {
		for k, roi := range [][]float32{{0, 0, 0.2, 0.1, 1, 1, 0.9, 1.2}, {0, 0, -0.3, 0.5, 1, 1, 1.4, 0.5}, {0, 0, 0, 0, 1, 1, 1, 1}} {
			n := kerneltest.ResizeNode(true, true, false, map[string]any{"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize",
				"extrapolation_value": float32(-7.5)})
			kerneltest.Check(t, d, fmt.Sprintf("Resize-13 tf_crop_and_resize %s roi %d", mode, k), kerneltest.Case{Node: n, Opset: 13, Args: []kerneltest.Arg{x(1, 2, 9, 11), kerneltest.ConstFloats(roi...), kerneltest.ConstFloats(1, 1, 1.5, 0.7)}})
		}
		n := kerneltest.ResizeNode(true, false, true, map[string]any{"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize", "axes": []int64{2, 3}})
		kerneltest.Check(t, d, "Resize-18 tf_crop_and_resize axes sizes "+mode, kerneltest.Case{Node: n, Opset: 18, Args: []kerneltest.Arg{x(1, 2, 9, 11), kerneltest.ConstFloats(0.1, 0.2, 0.8, 0.9), {}, kerneltest.ConstInts(1, 5)}})
	}
	for _, exclude := range []int{0, 1} {
		n := kerneltest.ResizeNode(false, true, false, map[string]any{"mode": "cubic", "cubic_coeff_a": float32(-0.5), "exclude_outside": exclude})
		kerneltest.Check(t, d, fmt.Sprintf("Resize-13 cubic exclude_outside %d", exclude), kerneltest.Case{Node: n, Opset: 13, Args: []kerneltest.Arg{x(1, 3, 7, 13), {}, kerneltest.ConstFloats(1, 1, 0.6, 2.3)}})
	}
}

// TestResizeDeclines checks that antialias, runtime scales and too many
// resized dimensions stay on the CPU.
func TestResizeDeclines(t *testing.T) {
	d := openTest(t)
	f32 := func(dims ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(dims...)) }
	scales := func(v ...float32) *graph.Tensor { return kerneltest.ConstFloats(v...).T }
	cases := []struct {
		what   string
		n      *graph.Node
		opset  int64
		in     []*graph.Type
		consts []*graph.Tensor
	}{
		{"antialias", kerneltest.ResizeNode(false, true, false, map[string]any{"mode": "linear", "antialias": 1}), 18,
			[]*graph.Type{f32(1, 1, 4, 4), nil, f32(4)}, []*graph.Tensor{nil, nil, scales(1, 1, 0.5, 0.5)}},
		{"runtime scales", kerneltest.ResizeNode(false, true, false, nil), 13, []*graph.Type{f32(1, 1, 4, 4), nil, f32(4)}, nil},
		{"five resized axes", kerneltest.ResizeNode(false, true, false, nil), 13, []*graph.Type{f32(2, 2, 2, 2, 2), nil, f32(5)},
			[]*graph.Tensor{nil, nil, scales(2, 2, 2, 2, 2)}},
		{"unknown mode", kerneltest.ResizeNode(false, true, false, map[string]any{"mode": "area"}), 13, []*graph.Type{f32(4), nil, f32(1)},
			[]*graph.Tensor{nil, nil, scales(2)}},
	}
	for _, c := range cases {
		if c.consts == nil {
			c.consts = make([]*graph.Tensor, len(c.in))
		}
		c.in = append(c.in, nil)
		c.consts = append(c.consts, nil)
		if d.Supports(planner.Query{Node: c.n, Opset: c.opset, Inputs: c.in, Consts: c.consts}) {
			t.Errorf("%s: supported, want unsupported", c.what)
		}
	}
}
