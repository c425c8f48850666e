package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// treeAttrs describes two trees of three nodes: tree 0 sends feature 0 <=
// 1.5 to leaf 1 and the rest to leaf 2; tree 1 sends feature 1 < 0 to leaf
// 1 and the rest to leaf 2.
func treeAttrs() ewAttrs {
	return ewWith(
		ewInts("nodes_treeids", 0, 0, 0, 1, 1, 1),
		ewInts("nodes_nodeids", 0, 1, 2, 0, 1, 2),
		ewInts("nodes_featureids", 0, 0, 0, 1, 0, 0),
		ewStringsAttr("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"),
		ewFloats("nodes_values", 1.5, 0, 0, 0, 0, 0),
		ewInts("nodes_truenodeids", 1, 0, 0, 1, 0, 0),
		ewInts("nodes_falsenodeids", 2, 0, 0, 2, 0, 0),
	)
}

func TestTreeEnsembleRegressor(t *testing.T) {
	attrs := treeAttrs()
	for k, v := range ewWith(ewInts("target_treeids", 0, 0, 1, 1), ewInts("target_nodeids", 1, 2, 1, 2),
		ewInts("target_ids", 0, 0, 0, 0), ewFloats("target_weights", 10, 20, 1, 2)) {
		attrs[k] = v
	}
	x := ewF32(ewShape(2, 2), 1, -1, 2, 5)
	y := mlRun(t, "TreeEnsembleRegressor", 1, attrs, 1, x)[0]
	ewCheck(t, "sum", y, graph.Float, ewShape(2, 1), []float64{11, 22}, 0)
	attrs["aggregate_function"] = ewString("aggregate_function", "AVERAGE")
	y = mlRun(t, "TreeEnsembleRegressor", 1, attrs, 1, x)[0]
	ewCheck(t, "average", y, graph.Float, ewShape(2, 1), []float64{5.5, 11}, 0)
	attrs["aggregate_function"] = ewString("aggregate_function", "MAX")
	attrs["base_values"] = ewFloats("base_values", 100)
	y = mlRun(t, "TreeEnsembleRegressor", 1, attrs, 1, x)[0]
	ewCheck(t, "max", y, graph.Float, ewShape(2, 1), []float64{110, 120}, 0)
	attrs["target_ids"] = ewInts("target_ids", 0, 0, 0, 3)
	if _, err := xRun(t, ops.DomainML, "TreeEnsembleRegressor", 1, attrs, 1, x); err == nil {
		t.Error("no error for a target out of range")
	}
}

func TestTreeEnsembleClassifier(t *testing.T) {
	attrs := treeAttrs()
	for k, v := range ewWith(ewInts("class_treeids", 0, 0, 1, 1), ewInts("class_nodeids", 1, 2, 1, 2),
		ewInts("class_ids", 0, 1, 0, 1), ewFloats("class_weights", 1, 1, 0.5, 0.5), ewInts("classlabels_int64s", 5, 6)) {
		attrs[k] = v
	}
	x := ewF32(ewShape(2, 2), 1, -1, 2, -5)
	out := mlRun(t, "TreeEnsembleClassifier", 1, attrs, 2, x)
	ewCheck(t, "labels", out[0], graph.Int64, ewShape(2), []float64{5, 6}, 0)
	ewCheck(t, "scores", out[1], graph.Float, ewShape(2, 2), []float64{1.5, 0, 0.5, 1}, 0)
	attrs["class_ids"] = ewInts("class_ids", 0, 0, 0, 0)
	attrs["class_weights"] = ewFloats("class_weights", -1, 1, -0.5, 0.5)
	delete(attrs, "classlabels_int64s")
	attrs["classlabels_strings"] = ewStringsAttr("classlabels_strings", "a", "b")
	out = mlRun(t, "TreeEnsembleClassifier", 1, attrs, 2, ewF32(ewShape(1, 2), 2, 3))
	checkStrings(t, "binary", out[0], ewShape(1), "b")
	ewCheck(t, "binary scores", out[1], graph.Float, ewShape(1, 2), []float64{-1.5, 1.5}, 0)
}
