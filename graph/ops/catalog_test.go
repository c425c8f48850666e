package ops

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestCatalogVersions(t *testing.T) {
	tests := []struct {
		domain, name string
		opset, since int64
	}{
		{"", "Resize", 13, 13},
		{"", "Resize", 17, 13},
		{"", "Resize", 18, 18},
		{"", "Resize", 21, 19},
		{"", "Squeeze", 21, 21},
		{"", "Squeeze", 20, 13},
		{"", "Add", 6, 6},
		{"", "Add", 21, 14},
		{"", "Conv", 21, 11},
		{"", "Split", 18, 18},
		{"", "ReduceMean", 18, 18},
		{"", "ReduceMax", 20, 20},
		{"", "Cast", 19, 19},
		{"", "Cast", 21, 21},
		{"", "GroupNormalization", 21, 21},
		{"", "LayerNormalization", 17, 17},
		{"", "StringSplit", 20, 20},
		{DomainML, "LabelEncoder", 3, 2},
		{DomainML, "LabelEncoder", 4, 4},
		{DomainML, "TreeEnsembleClassifier", 3, 3},
		{DomainTraining, "Adam", 1, 1},
	}
	for _, tt := range tests {
		s := Lookup(tt.domain, tt.name, tt.opset)
		if s == nil {
			t.Errorf("Lookup(%q, %q, %d) = nil", tt.domain, tt.name, tt.opset)
			continue
		}
		if s.Since != tt.since {
			t.Errorf("Lookup(%q, %q, %d).Since = %d, want %d", tt.domain, tt.name, tt.opset, s.Since, tt.since)
		}
	}
	if s := Lookup("", "Resize", 9); s != nil {
		t.Errorf("Resize exists at opset 9: %+v", s)
	}
}

func TestCatalogAttributes(t *testing.T) {
	add := Lookup("", "Add", 6)
	if a := add.Attr("broadcast"); a == nil || a.Default == nil || a.Default.I != 0 || a.Type != graph.AttrInt {
		t.Errorf("Add-6 broadcast = %+v", a)
	}
	if a := Lookup("", "Add", 7).Attr("broadcast"); a != nil {
		t.Errorf("Add-7 has broadcast")
	}
	conv := Lookup("", "Conv", 11)
	if a := conv.Attr("auto_pad"); a == nil || string(a.Default.S) != "NOTSET" {
		t.Errorf("Conv auto_pad = %+v", a)
	}
	if a := conv.Attr("group"); a == nil || a.Default.I != 1 {
		t.Errorf("Conv group = %+v", a)
	}
	if conv.MinInputs != 2 || conv.MaxInputs != 3 || conv.MinOutputs != 1 || conv.MaxOutputs != 1 {
		t.Errorf("Conv arity = %d..%d -> %d..%d", conv.MinInputs, conv.MaxInputs, conv.MinOutputs, conv.MaxOutputs)
	}
	if concat := Lookup("", "Concat", 13); concat.MaxInputs != -1 || !concat.Attr("axis").Required {
		t.Errorf("Concat-13 = %+v", concat)
	}
	if a := Lookup("", "Clip", 6).Attr("max"); a == nil || a.Default.F != 3.4028235e+38 {
		t.Errorf("Clip-6 max = %+v", a)
	}
	if a := Lookup("", "Cast", 19).Attr("saturate"); a == nil || a.Default.I != 1 {
		t.Errorf("Cast-19 saturate = %+v", a)
	}
	if a := Lookup("", "Pad", 18); a.MaxInputs != 4 {
		t.Errorf("Pad-18 max inputs = %d", a.MaxInputs)
	}
	if s := Lookup("", "Split", 18); s.Attr("num_outputs") == nil || s.MaxOutputs != -1 {
		t.Errorf("Split-18 = %+v", s)
	}
	if !Lookup("", "Upsample", 10).Deprecated {
		t.Errorf("Upsample-10 not deprecated")
	}
	if a := Lookup(DomainML, "LabelEncoder", 2).Attr("default_float"); a == nil || a.Default.F != 0 {
		t.Errorf("LabelEncoder default_float = %+v", a)
	}
}

func TestCatalogComplete(t *testing.T) {
	count := 0
	for _, s := range generatedSchemas() {
		count++
		if s.MinInputs < 0 || (s.MaxInputs >= 0 && s.MaxInputs < s.MinInputs) {
			t.Errorf("%s-%d inputs %d..%d", s.Name, s.Since, s.MinInputs, s.MaxInputs)
		}
		for _, a := range s.Attrs {
			if a.Required && a.Default != nil {
				t.Errorf("%s-%d attribute %s required with a default", s.Name, s.Since, a.Name)
			}
			if a.Default != nil && a.Default.Type != a.Type {
				t.Errorf("%s-%d attribute %s of type %s with a %s default", s.Name, s.Since, a.Name, a.Type, a.Default.Type)
			}
		}
	}
	if count < 440 {
		t.Errorf("only %d generated schemas", count)
	}
	for _, name := range []string{"Conv", "Relu", "Add", "MatMul", "Reshape", "Resize", "Loop", "Softmax", "Gather"} {
		if Lookup("", name, latestOpset).Infer == nil {
			t.Errorf("%s has no inference rule", name)
		}
	}
	if tol := Lookup("", "Conv", latestOpset).Tolerance(); tol != accumulating {
		t.Errorf("Conv tolerance = %+v", tol)
	}
	if tol := Lookup("", "Relu", latestOpset).Tolerance(); tol != DefaultTolerance {
		t.Errorf("Relu tolerance = %+v", tol)
	}
}
