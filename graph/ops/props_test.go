package ops

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// TestPropsHoldForEveryVersion checks that each op's properties are the
// same in all its versions (Has reads one of them) and that what a
// property promises of the op's form holds in every version: one output
// for Elementwise and View, an input for View and FusableActivation, and
// an inference rule.
func TestPropsHoldForEveryVersion(t *testing.T) {
	withProps := 0
	for _, domain := range []string{graph.DefaultDomain, DomainML, DomainTraining, FusedDomain} {
		for _, name := range Names(domain) {
			versions := Versions(domain, name)
			for _, s := range versions {
				if s.Props != versions[0].Props {
					t.Errorf("%s %s: version %d has properties %b, version %d %b", domainName(domain), name, s.Since, s.Props,
						versions[0].Since, versions[0].Props)
				}
				if s.Props == 0 {
					continue
				}
				withProps++
				if s.Infer == nil {
					t.Errorf("%s-%d has properties %b and no inference rule", name, s.Since, s.Props)
				}
				if s.Has(Elementwise) && (s.MaxOutputs != 1 || s.MinInputs < 1) {
					t.Errorf("%s-%d is Elementwise with %d to %d inputs and %d to %d outputs", name, s.Since,
						s.MinInputs, s.MaxInputs, s.MinOutputs, s.MaxOutputs)
				}
				if s.Has(View) && (s.MaxOutputs != 1 || s.MinInputs < 1) {
					t.Errorf("%s-%d is a View with %d to %d inputs and %d to %d outputs", name, s.Since,
						s.MinInputs, s.MaxInputs, s.MinOutputs, s.MaxOutputs)
				}
				if s.Has(FusableActivation) && !s.Has(Elementwise) {
					t.Errorf("%s-%d is a FusableActivation but not Elementwise", name, s.Since)
				}
			}
		}
	}
	if withProps == 0 {
		t.Fatal("no op has properties")
	}
}

// TestHas checks Has on both spellings of the default domain, on another
// domain and on unknown ops.
func TestHas(t *testing.T) {
	for _, c := range []struct {
		domain, op string
		p          Props
		want       bool
	}{
		{"", "Add", Elementwise, true},
		{"ai.onnx", "Add", Elementwise, true},
		{"", "BitwiseXor", Elementwise, true},
		{"", "Relu", Elementwise | FusableActivation, true},
		{"", "Tanh", Elementwise | FusableActivation, false},
		{"", "CastLike", Elementwise, false},
		{"", "Reshape", View, true},
		{"", "Transpose", View, false},
		{"", "RandomNormal", Nondeterministic, true},
		{FusedDomain, "FusedConv", Elementwise, false},
		{"", "NoSuchOp", Elementwise, false},
		{"com.example", "Add", Elementwise, false},
	} {
		if got := Has(c.domain, c.op, c.p); got != c.want {
			t.Errorf("Has(%q, %q, %b) = %v, want %v", c.domain, c.op, c.p, got, c.want)
		}
	}
}

// TestSetPropsRefusesUnknownOps checks that a misspelt op name in a
// setProps list panics instead of dropping the property.
func TestSetPropsRefusesUnknownOps(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("setProps accepted an unknown op")
		}
	}()
	setProps(Elementwise, "Relu", "Rleu")
}

// TestAttrFloat checks that an attribute present on the node wins and an
// absent one takes the default of the schema at the node's opset.
func TestAttrFloat(t *testing.T) {
	n := &graph.Node{OpType: "LeakyRelu"}
	if got := AttrFloat(n, 16, "alpha"); got != 0.01 {
		t.Errorf("LeakyRelu's default alpha is %g, want 0.01", got)
	}
	n.Attrs = map[string]*graph.Attribute{"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.5}}
	if got := AttrFloat(n, 16, "alpha"); got != 0.5 {
		t.Errorf("alpha 0.5 read as %g", got)
	}
	if got := AttrFloat(&graph.Node{OpType: "Selu"}, 1, "alpha"); got != 1.6732 {
		t.Errorf("Selu-1's default alpha is %g, want 1.6732", got)
	}
	if got := AttrFloat(&graph.Node{OpType: "Relu"}, 14, "alpha"); got != 0 {
		t.Errorf("Relu has no alpha, read %g", got)
	}
}
