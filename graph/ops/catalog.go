package ops

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

//go:generate /usr/bin/python3 gen/catalog.py catalog_gen.go

// The domains of the operators ONNX defines, as node domains spell them
// (ai.onnx is the empty string).
const (
	DomainML       = "ai.onnx.ml"
	DomainTraining = "ai.onnx.preview.training"
)

// The catalog is registered during package-variable initialization, before
// any init function runs, so that rule files may call SetInfer and
// SetTolerance from init in any file order.
var _ = registerCatalog()

// registerCatalog registers every operator version known to ONNX: the
// generated ones (up to ai.onnx opset 17), the later ones written by hand
// and the later copies of earlier versions that only widened types.
func registerCatalog() bool {
	Register(generatedSchemas()...)
	Register(laterSchemas()...)
	registerWidened()
	documentDefaults()
	return true
}

// documentDefaults gives the attributes whose default ONNX states in the
// documentation only the default they state, and those whose default ONNX
// leaves unstated the one this runtime takes, in every version that has
// them: the catalog is their one home, kernels and rules restate none.
func documentDefaults() {
	for _, d := range []struct {
		domain, op string
		attr       AttrSpec
	}{
		{graph.DefaultDomain, "Concat", defInt("axis", 1)},                          // Concat-1: "Default value is 1."
		{graph.DefaultDomain, "Split", defInt("axis", 0)},                           // Split-1: "Which axis to split on (defaults to 0)"
		{graph.DefaultDomain, "SequenceEmpty", defInt("dtype", int64(graph.Float))}, // "The default type is 'float'."
		// Unstated: an absent Scaler offset or scale is the identity, a
		// regressor without n_targets has one.
		{DomainML, "Scaler", defFloats("offset", 0)},
		{DomainML, "Scaler", defFloats("scale", 1)},
		{DomainML, "TreeEnsembleRegressor", defInt("n_targets", 1)},
	} {
		for _, s := range Versions(d.domain, d.op) {
			if a := s.Attr(d.attr.Name); a != nil && a.Default == nil && !a.Required {
				*a = d.attr
			}
		}
	}
}

// req describes a required attribute.
func req(name string, t graph.AttrType) AttrSpec {
	return AttrSpec{Name: name, Type: t, Required: true}
}

// opt describes an optional attribute without a default value.
func opt(name string, t graph.AttrType) AttrSpec {
	return AttrSpec{Name: name, Type: t}
}

func defInt(name string, v int64) AttrSpec {
	return AttrSpec{Name: name, Type: graph.AttrInt, Default: &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}}
}

func defFloat(name string, v float32) AttrSpec {
	return AttrSpec{Name: name, Type: graph.AttrFloat, Default: &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}}
}

func defString(name, v string) AttrSpec {
	return AttrSpec{Name: name, Type: graph.AttrString, Default: &graph.Attribute{Name: name, Type: graph.AttrString, S: []byte(v)}}
}

func defInts(name string, v ...int64) AttrSpec {
	return AttrSpec{Name: name, Type: graph.AttrInts, Default: &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}}
}

func defFloats(name string, v ...float32) AttrSpec {
	return AttrSpec{Name: name, Type: graph.AttrFloats, Default: &graph.Attribute{Name: name, Type: graph.AttrFloats, Floats: v}}
}

func defStrings(name string, v ...string) AttrSpec {
	s := make([][]byte, len(v))
	for i, x := range v {
		s[i] = []byte(x)
	}
	return AttrSpec{Name: name, Type: graph.AttrStrings, Default: &graph.Attribute{Name: name, Type: graph.AttrStrings, Strings: s}}
}

// negZero is the float32 -0, which Go constants cannot spell.
var negZero = float32(math.Copysign(0, -1))
