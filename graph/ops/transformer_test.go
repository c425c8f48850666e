package ops

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestTransformerRules(t *testing.T) {
	heads := []*graph.Attribute{intAttr("q_num_heads", 8), intAttr("kv_num_heads", 2)}
	f16 := graph.TensorType(graph.Float16, shp(2, 5))
	for _, tc := range []ruleCase{
		{name: "attention 4-D", op: "Attention", in: []*graph.Type{f32("B", 8, "S", 16), f32("B", 2, "S", 16), f32("B", 2, "S", 32)},
			nOut: 4, want: []string{"float32[B 8 S 32]", "float32[B 2 S 16]", "float32[B 2 S 32]", "float32[B 8 S S]"}},
		{name: "attention 3-D past", op: "Attention", attrs: heads,
			in:   []*graph.Type{f32("B", 1, 128), f32("B", 1, 32), f32("B", 1, 48), nil, f32("B", 2, 7, 16), f32("B", 2, 7, 24)},
			nOut: 4, want: []string{"float32[B 1 192]", "float32[B 2 8 16]", "float32[B 2 8 24]", "float32[B 8 1 8]"}},
		{name: "attention 3-D symbolic past", op: "Attention", opset: 23, attrs: heads,
			in:   []*graph.Type{f32(1, 1, 128), f32(1, 1, 32), f32(1, 1, 32), nil, f32(1, 2, "P", 16), f32(1, 2, "P", 16)},
			nOut: 3, want: []string{"float32[1 1 128]", "float32[1 2 ? 16]"}},
		{name: "attention 3-D no heads", op: "Attention", in: []*graph.Type{f32(1, 1, 128), f32(1, 1, 32), f32(1, 1, 32)},
			errHas: "q_num_heads"},
		{name: "attention heads", op: "Attention", in: []*graph.Type{f32(1, 3, 1, 8), f32(1, 2, 1, 8), f32(1, 2, 1, 8)},
			errHas: "multiple"},
		{name: "attention mode", op: "Attention", attrs: []*graph.Attribute{intAttr("qk_matmul_output_mode", 5)},
			in: []*graph.Type{f32(1, 2, 1, 8), f32(1, 2, 1, 8), f32(1, 2, 1, 8)}, errHas: "qk_matmul_output_mode"},
		{name: "attention nonpad with past", op: "Attention",
			in: []*graph.Type{f32(1, 2, 1, 8), f32(1, 2, 1, 8), f32(1, 2, 1, 8), nil, f32(1, 2, 3, 8), f32(1, 2, 3, 8),
				graph.TensorType(graph.Int64, shp(1))}, errHas: "nonpad"},
		{name: "rms", op: "RMSNormalization", in: []*graph.Type{f16, f32(5)}, want: []string{"float32[2 5]"}},
		{name: "rms axis", op: "RMSNormalization", attrs: []*graph.Attribute{intAttr("axis", 2)}, in: []*graph.Type{f32(2, 5), f32(5)},
			errHas: "axis"},
		{name: "rotary", op: "RotaryEmbedding", attrs: []*graph.Attribute{intAttr("num_heads", 4)},
			in: []*graph.Type{f32("B", "S", 64), f32(128, 8), f32(128, 8)}, want: []string{"float32[B S 64]"}},
		{name: "rotary no heads", op: "RotaryEmbedding", in: []*graph.Type{f32("B", "S", 64), f32(128, 8), f32(128, 8)},
			errHas: "num_heads"},
		{name: "scatter", op: "TensorScatter", in: []*graph.Type{f32(2, 4, 16, 8), f32(2, 4, 1, 8)}, want: []string{"float32[2 4 16 8]"}},
		{name: "scatter batch axis", op: "TensorScatter", attrs: []*graph.Attribute{intAttr("axis", -4)},
			in: []*graph.Type{f32(2, 4, 16, 8), f32(2, 4, 1, 8)}, errHas: "batch"},
	} {
		runCase(t, tc)
	}
}

// TestOpsets22To24 checks the versions of ONNX 1.17 to 1.19: new ops, new
// attributes, and copies where a version only widened types.
func TestOpsets22To24(t *testing.T) {
	for _, tt := range []struct {
		name         string
		opset, since int64
	}{
		{"Conv", 22, 22}, {"Conv", 21, 11}, {"Relu", 24, 14}, {"Cast", 23, 23}, {"Cast", 24, 24},
		{"Attention", 23, 23}, {"Attention", 24, 24}, {"RMSNormalization", 24, 23}, {"RotaryEmbedding", 24, 23},
		{"TensorScatter", 24, 24}, {"TopK", 24, 24}, {"TopK", 23, 11}, {"Reshape", 23, 23}, {"Reshape", 24, 24},
		{"QuantizeLinear", 23, 23}, {"DequantizeLinear", 24, 24}, {"SplitToSequence", 24, 24},
	} {
		s := Lookup("", tt.name, tt.opset)
		if s == nil || s.Since != tt.since {
			t.Errorf("Lookup(%s, %d) = %+v, want version %d", tt.name, tt.opset, s, tt.since)
		}
	}
	for _, name := range []string{"Attention", "RMSNormalization", "RotaryEmbedding", "TensorScatter"} {
		if Lookup("", name, 22) != nil {
			t.Errorf("%s exists at opset 22", name)
		}
	}
	if a := Lookup("", "Attention", 23); a.MaxInputs != 6 || a.MaxOutputs != 4 || a.Attr("softcap").Default.F != 0 {
		t.Errorf("Attention-23 = %+v", a)
	}
	if a := Lookup("", "Attention", 24); a.MaxInputs != 7 || a.Infer == nil || a.Tolerance() != accumulating {
		t.Errorf("Attention-24 = %+v", a)
	}
	if a := Lookup("", "Cast", 24).Attr("round_mode"); a == nil || string(a.Default.S) != "up" {
		t.Errorf("Cast-24 round_mode = %+v", a)
	}
	if Lookup("", "Cast", 23).Attr("round_mode") != nil {
		t.Errorf("Cast-23 has round_mode")
	}
	if a := Lookup("", "QuantizeLinear", 23).Attr("precision"); a == nil || a.Default.I != 0 {
		t.Errorf("QuantizeLinear-23 precision = %+v", a)
	}
	if a := Lookup("", "DequantizeLinear", 23).Attr("output_dtype"); a == nil {
		t.Errorf("DequantizeLinear-23 has no output_dtype")
	}
	// A copy keeps its previous version's arity, attributes and rule.
	old, s := Lookup("", "LpPool", 18), Lookup("", "LpPool", 22)
	if s.Since != 22 || len(s.Attrs) != len(old.Attrs) || s.MaxInputs != old.MaxInputs || s.Infer == nil ||
		s.Attr("p").Default.I != 2 {
		t.Errorf("LpPool-22 = %+v, LpPool-18 = %+v", s, old)
	}
	if s := Lookup("", "Loop", 24); len(s.OptionalInputs) != 2 {
		t.Errorf("Loop-24 optional inputs %v", s.OptionalInputs)
	}
}
