package ops

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// formChanges lists the ops of the default domain whose versions differ in
// their inputs or attributes (consumed_inputs aside, which every consumer
// ignores) and that Canonicalize leaves as they are, with the reason.
var formChanges = map[string]string{
	"Add": legacyBroadcast, "Sub": legacyBroadcast, "Mul": legacyBroadcast, "Div": legacyBroadcast, "Pow": legacyBroadcast,
	"And": legacyBroadcast, "Or": legacyBroadcast, "Xor": legacyBroadcast,
	"Equal": legacyBroadcast, "Greater": legacyBroadcast, "Less": legacyBroadcast,
	"Softmax": coerced2D, "LogSoftmax": coerced2D, "Hardmax": coerced2D,

	"ArgMax": added, "ArgMin": added, "AveragePool": added, "MaxPool": added, "CastLike": added, "Constant": added,
	"GatherND": added, "ScatterElements": added, "ScatterND": added, "Shape": added, "RoiAlign": added,
	"DepthToSpace": added, "QuantizeLinear": added, "DequantizeLinear": added, "GRU": added, "LSTM": added, "RNN": added,
	"OptionalHasElement": added, "Attention": added, "Loop": "Loop-1 counts M and cond among its required inputs (both may be omitted, as later versions say); the form is the same",
	"Selu": "only the printed precision of the defaults of alpha and gamma differs between Selu-1 and Selu-6",

	"BatchNormalization": "not canonicalized yet: is_test and spatial before 9 (spatial=0 normalizes per activation, which BatchNormalization-15 cannot say), training outputs before 14; hostfallback/norm.go, backend/vulkan/batchnorm.go and planner/fuse_bn.go branch on the version",
	"Cast":               "not canonicalized yet: Cast-1's to is a type name string; graph/ops castTarget reads both",
	"Concat":             "not canonicalized yet: axis is optional (default 1) before 4; hostfallback/concat.go branches on the version",
	"DFT":                "not canonicalized yet: axis is an attribute before 20, an input from it; hostfallback/signal.go branches on the version",
	"Gemm":               "not canonicalized yet: broadcast before 7, C required before 11; hostfallback/gemm.go, backend/vulkan/matmul.go and planner/tensorshard.go branch on the version",
	"GlobalLpPool":       "not canonicalized yet: p is a float in version 1, an int from 2",
	"GridSample":         "not canonicalized yet: modes bilinear and bicubic before 20, linear and cubic from it; hostfallback/image.go branches on the version",
	"GroupNormalization": "not canonicalized yet: scale and bias per group in 18, per channel in 21 (an expansion over each group's channels); hostfallback/norm.go branches on the version",
	"LpPool":             "not canonicalized yet: p is a float in version 1, an int from 2",
	"Reshape":            "not canonicalized yet: the shape is an attribute before 5; graph/ops, hostfallback/shape.go and backend/vulkan/movement.go branch on the version",
	"Scan":               "not canonicalized yet: Scan-8 has a batch axis and sequence_lens; hostfallback/control_scan.go branches on the version",
	"Tile":               "not canonicalized yet: Tile-1 repeats along one axis given by inputs; hostfallback/tile.go branches on the version",
}

// Reasons shared by several ops in formChanges.
const (
	added           = "later versions only add attributes or optional inputs whose default or absence is the old behaviour: the old form is a valid new one"
	legacyBroadcast = "not canonicalized yet: the broadcast and axis attributes before 7 (the legacy broadcast reshapes B by ranks known only after inference); hostfallback/broadcast.go and the Vulkan lowerings branch on the version"
	coerced2D       = "not canonicalized yet: before 13 the input is coerced to 2-D at axis (default 1), which needs a Flatten and a Reshape around the op; hostfallback/softmax.go, backend/vulkan/softmax.go and planner/tensorshard.go branch on the version"
)

// formsDiffer reports whether two schemas differ in their input counts or
// attributes (names, types, defaults, required), consumed_inputs aside.
func formsDiffer(a, b *Schema) bool {
	if a.MinInputs != b.MinInputs || a.MaxInputs != b.MaxInputs {
		return true
	}
	attrs := func(s *Schema) map[string]string {
		m := map[string]string{}
		for _, x := range s.Attrs {
			if x.Name != "consumed_inputs" {
				m[x.Name] = fmt.Sprint(x.Type, x.Required, x.Default)
			}
		}
		return m
	}
	return !maps.Equal(attrs(a), attrs(b))
}

// TestCanonicalCoverage fails when an op of the default domain whose
// versions differ in form is neither canonicalized nor listed in
// formChanges with its reason, or when a listed op is canonicalized or no
// longer differs.
func TestCanonicalCoverage(t *testing.T) {
	mu.RLock()
	var differ []string
	for k, vs := range registry {
		if k.domain != graph.DefaultDomain {
			continue
		}
		for _, s := range vs[:len(vs)-1] {
			if formsDiffer(s, vs[len(vs)-1]) {
				differ = append(differ, k.name)
				break
			}
		}
	}
	mu.RUnlock()
	for _, op := range differ {
		_, canon := canonical[op]
		_, listed := formChanges[op]
		if !canon && !listed {
			t.Errorf("%s: its versions differ in form; canonicalize it (canonical) or say why not (formChanges)", op)
		}
	}
	for op := range formChanges {
		if _, canon := canonical[op]; canon || !slices.Contains(differ, op) {
			t.Errorf("%s is listed in formChanges, but it is canonicalized or its versions do not differ in form", op)
		}
	}
	for op := range canonical {
		if len(Versions(graph.DefaultDomain, op)) == 0 {
			t.Errorf("canonical names %s, which the catalog does not know", op)
		}
	}
}
