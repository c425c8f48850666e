package ops

import (
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestParamsDefaultsFollowTheVersion(t *testing.T) {
	n := &graph.Node{Name: "s", OpType: "Softmax"}
	if got := Params[SoftmaxParams](n, 11).Axis; got != 1 {
		t.Errorf("Softmax-11 axis = %d, want 1", got)
	}
	if got := Params[SoftmaxParams](n, 13).Axis; got != -1 {
		t.Errorf("Softmax-13 axis = %d, want -1", got)
	}
	n.Attrs = map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: 2}}
	if got := AxisParamOf(n, 13).Axis; got != 2 {
		t.Errorf("Softmax-13 axis 2 read as %d", got)
	}
	if w := WindowOf(n, 13); w != nil {
		t.Errorf("Softmax has a window: %+v", w)
	}
}

func TestParamsOptionalScalars(t *testing.T) {
	n := &graph.Node{Name: "sh", OpType: "Shape"}
	p := Params[ShapeParams](n, 15)
	if p.End != nil || p.Start != 0 {
		t.Errorf("Shape without attributes: end %v start %d, want nil and 0", p.End, p.Start)
	}
	n.Attrs = map[string]*graph.Attribute{"end": {Name: "end", Type: graph.AttrInt, I: -1}}
	if p := Params[ShapeParams](n, 15); p.End == nil || *p.End != -1 {
		t.Errorf("Shape end -1 read as %v", p.End)
	}
}

func TestParseParamsCachesAndNamesTheNode(t *testing.T) {
	lr := &graph.Node{Name: "act", OpType: "LeakyRelu", Inputs: []string{"x"}, Outputs: []string{"y"}}
	m := &graph.Model{Name: "m", Opsets: map[string]int64{"": 17}, Graph: &graph.Graph{Nodes: []*graph.Node{lr}}}
	if err := ParseParams(m); err != nil {
		t.Fatal(err)
	}
	p := Params[LeakyReluParams](lr, 17)
	if p != lr.Params || p.Alpha != 0.01 {
		t.Errorf("LeakyRelu params %+v (cached %v), want the cached ones with alpha 0.01", p, lr.Params)
	}
	lr.Params = nil
	lr.Attrs = map[string]*graph.Attribute{"alpha": {Name: "alpha", Type: graph.AttrInt, I: 1}}
	err := ParseParams(m)
	if err == nil || !strings.Contains(err.Error(), `node "act"`) || !strings.Contains(err.Error(), `"alpha"`) {
		t.Errorf("alpha of type int: error %v, want one naming node act and alpha", err)
	}
}

func TestParamsOlderVersionsTakeAddedAttributesDefaults(t *testing.T) {
	n := &graph.Node{Name: "c", OpType: "Cast"}
	if got := Params[CastParams](n, 13).RoundMode; got != "up" {
		t.Errorf("Cast-13 round_mode = %q, want the later versions' default up", got)
	}
	if got := Params[ArgMaxParams](&graph.Node{OpType: "ArgMax"}, 11).SelectLastIndex; got != 0 {
		t.Errorf("ArgMax-11 select_last_index = %d, want 0", got)
	}
}

func TestFusedClipNeedsBothBounds(t *testing.T) {
	attr := func(name string, f float32) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: f}
	}
	n := &graph.Node{Name: "fc", Domain: FusedDomain, OpType: "FusedConv", Attrs: map[string]*graph.Attribute{
		"activation": {Name: "activation", Type: graph.AttrString, S: []byte(ActClip)}, "alpha": attr("alpha", -1)}}
	if _, _, _, err := FusedActivation(n, 1); err == nil || !strings.Contains(err.Error(), `"fc"`) {
		t.Errorf("fused Clip without beta: error %v, want one naming node fc", err)
	}
	n.Attrs["beta"] = attr("beta", 6)
	name, lo, hi, err := FusedActivation(n, 1)
	if err != nil || name != ActClip || lo != -1 || hi != 6 {
		t.Errorf("fused Clip [-1, 6] read as %q [%v, %v], %v", name, lo, hi, err)
	}
}

func TestParamsAttributeTypedByVersion(t *testing.T) {
	to := func(a *graph.Attribute) *graph.Node {
		return &graph.Node{Name: "c", OpType: "Cast", Attrs: map[string]*graph.Attribute{"to": a}}
	}
	if p, err := readParams(to(&graph.Attribute{Name: "to", Type: graph.AttrInt, I: 10}), 13); err != nil || p.(*CastParams).To != 10 {
		t.Errorf("Cast-13 to=10: %+v, %v", p, err)
	}
	if p, err := readParams(to(&graph.Attribute{Name: "to", Type: graph.AttrString, S: []byte("FLOAT16")}), 1); err != nil || p.(*CastParams).ToString != "FLOAT16" {
		t.Errorf("Cast-1 to=FLOAT16: %+v, %v", p, err)
	}
	if _, err := readParams(to(&graph.Attribute{Name: "to", Type: graph.AttrFloat, F: 1}), 13); err == nil {
		t.Error("Cast-13 with a float to: no error")
	}
}
