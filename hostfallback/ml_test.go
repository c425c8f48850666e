package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// mlRun runs an ai.onnx.ml kernel with nOut outputs.
func mlRun(t *testing.T, op string, opset int64, attrs ewAttrs, nOut int, in ...*graph.Tensor) []*graph.Tensor {
	t.Helper()
	return xOK(t, ops.DomainML, op, opset, attrs, nOut, in...)
}

func ewFloats(name string, v ...float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloats, Floats: v}
}

func TestMLElementwise(t *testing.T) {
	x := ewF32(ewShape(2, 2), -1, 0.5, 2, 3)
	y := mlRun(t, "Binarizer", 1, ewWith(ewFloat("threshold", 0.5)), 1, x)[0]
	ewCheck(t, "binarizer", y, graph.Float, ewShape(2, 2), []float64{0, 0, 1, 1}, 0)
	y = mlRun(t, "Scaler", 1, ewWith(ewFloats("offset", 1, 0), ewFloats("scale", 2)), 1, x)[0]
	ewCheck(t, "scaler", y, graph.Float, ewShape(2, 2), []float64{-4, 1, 2, 6}, 0)
	n := ewF32(ewShape(2, 2), 3, 4, -1, 1)
	y = mlRun(t, "Normalizer", 1, ewWith(ewString("norm", "L2")), 1, n)[0]
	ewCheck(t, "L2", y, graph.Float, ewShape(2, 2), []float64{0.6, 0.8, -1 / math.Sqrt2, 1 / math.Sqrt2}, 1e-6)
	y = mlRun(t, "Normalizer", 1, ewWith(ewString("norm", "L1")), 1, n)[0]
	ewCheck(t, "L1", y, graph.Float, ewShape(2, 2), []float64{3.0 / 7, 4.0 / 7, -0.5, 0.5}, 1e-6)
	y = mlRun(t, "Normalizer", 1, nil, 1, n)[0]
	ewCheck(t, "MAX", y, graph.Float, ewShape(2, 2), []float64{0.75, 1, -1, 1}, 1e-6)
	nan := float32(math.NaN())
	y = mlRun(t, "Imputer", 1, ewWith(ewFloats("imputed_value_floats", 7, 8), ewFloat("replaced_value_float", nan)), 1, ewF32(ewShape(2, 2), nan, 1, 2, nan))[0]
	ewCheck(t, "imputer", y, graph.Float, ewShape(2, 2), []float64{7, 1, 2, 8}, 0)
	y = mlRun(t, "Imputer", 1, ewWith(ewInts("imputed_value_int64s", 9), ewInt("replaced_value_int64", -1)), 1, xI64(ewShape(3), -1, 2, -1))[0]
	ewCheck(t, "imputer int", y, graph.Int64, ewShape(3), []float64{9, 2, 9}, 0)
	if _, err := xRun(t, ops.DomainML, "Scaler", 1, ewWith(ewFloats("scale", 1, 2, 3)), 1, x); err == nil {
		t.Error("scaler: no error for 3 scales of 2 features")
	}
}

func TestMLLookups(t *testing.T) {
	x := ewStrings(ewShape(3), "b", "z", "a")
	y := mlRun(t, "ArrayFeatureExtractor", 1, nil, 1, ewF32(ewShape(2, 3), 1, 2, 3, 4, 5, 6), xI64(ewShape(2), 2, 0))[0]
	ewCheck(t, "extract", y, graph.Float, ewShape(2, 2), []float64{3, 1, 6, 4}, 0)
	s := mlRun(t, "ArrayFeatureExtractor", 1, nil, 1, x, xI64(ewShape(1), 1))[0]
	checkStrings(t, "extract strings", s, ewShape(1, 1), "z")
	enc := ewWith(ewStringsAttr("keys_strings", "a", "b"), ewInts("values_int64s", 10, 20), ewInt("default_int64", -5))
	y = mlRun(t, "LabelEncoder", 2, enc, 1, x)[0]
	ewCheck(t, "encoder", y, graph.Int64, ewShape(3), []float64{20, -5, 10}, 0)
	back := ewWith(ewInts("keys_int64s", 10, 20), ewStringsAttr("values_strings", "a", "b"))
	s = mlRun(t, "LabelEncoder", 2, back, 1, xI64(ewShape(2), 20, 30))[0]
	checkStrings(t, "decoder", s, ewShape(2), "b", "_Unused")
	fl := ewWith(ewFloats("keys_floats", 0.5, -0), ewFloats("values_floats", 1, 2))
	y = mlRun(t, "LabelEncoder", 2, fl, 1, ewF32(ewShape(3), 0, 0.5, 3))[0]
	ewCheck(t, "floats", y, graph.Float, ewShape(3), []float64{2, 1, 0}, 0)
	v1 := ewWith(ewStringsAttr("classes_strings", "x", "y"))
	y = mlRun(t, "LabelEncoder", 1, v1, 1, ewStrings(ewShape(2), "y", "q"))[0]
	ewCheck(t, "v1", y, graph.Int64, ewShape(2), []float64{1, -1}, 0)
	cm := ewWith(ewStringsAttr("cats_strings", "a", "b"), ewInts("cats_int64s", 1, 2))
	y = mlRun(t, "CategoryMapper", 1, cm, 1, x)[0]
	ewCheck(t, "category", y, graph.Int64, ewShape(3), []float64{2, -1, 1}, 0)
	s = mlRun(t, "CategoryMapper", 1, cm, 1, xI64(ewShape(2), 1, 5))[0]
	checkStrings(t, "category back", s, ewShape(2), "a", "_Unused")
	y = mlRun(t, "OneHotEncoder", 1, ewWith(ewInts("cats_int64s", 3, 1)), 1, xI64(ewShape(2), 1, 4))[0]
	ewCheck(t, "one hot", y, graph.Float, ewShape(2, 2), []float64{0, 1, 0, 0}, 0)
	if _, err := xRun(t, ops.DomainML, "OneHotEncoder", 1, ewWith(ewInts("cats_int64s", 3), ewInt("zeros", 0)), 1, xI64(ewShape(1), 4)); err == nil {
		t.Error("one hot: no error for an unknown category")
	}
	y = mlRun(t, "FeatureVectorizer", 1, ewWith(ewInts("inputdimensions", 1, 3)), 1, ewF32(ewShape(2, 2), 1, 2, 3, 4), xI64(ewShape(2, 1), 5, 6))[0]
	ewCheck(t, "vectorizer", y, graph.Float, ewShape(2, 4), []float64{1, 5, 0, 0, 3, 6, 0, 0}, 0)
}

func TestMLLinear(t *testing.T) {
	x := ewF32(ewShape(2, 2), 1, 2, 3, 4)
	reg := ewWith(ewFloats("coefficients", 1, 1, 1, -1), ewFloats("intercepts", 0.5, 0), ewInt("targets", 2))
	y := mlRun(t, "LinearRegressor", 1, reg, 1, x)[0]
	ewCheck(t, "regressor", y, graph.Float, ewShape(2, 2), []float64{3.5, -1, 7.5, -1}, 1e-6)
	cls := ewWith(ewFloats("coefficients", 1, 0, 0, 1, -1, -1), ewInts("classlabels_ints", 7, 8, 9))
	out := mlRun(t, "LinearClassifier", 1, cls, 2, ewF32(ewShape(2, 2), 3, 1, -1, -2))
	ewCheck(t, "labels", out[0], graph.Int64, ewShape(2), []float64{7, 9}, 0)
	ewCheck(t, "scores", out[1], graph.Float, ewShape(2, 3), []float64{3, 1, -4, -1, -2, 3}, 1e-6)
	cls["post_transform"] = ewString("post_transform", "SOFTMAX")
	out = mlRun(t, "LinearClassifier", 1, cls, 2, ewF32(ewShape(1, 2), 0, 0))
	ewCheck(t, "softmax", out[1], graph.Float, ewShape(1, 3), []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-6)
	bin := ewWith(ewFloats("coefficients", 1, -1), ewStringsAttr("classlabels_strings", "no", "yes"), ewString("post_transform", "LOGISTIC"))
	out = mlRun(t, "LinearClassifier", 1, bin, 2, ewF32(ewShape(2, 2), 2, 1, 0, 1))
	checkStrings(t, "binary", out[0], ewShape(2), "yes", "no")
	p, q := 1/(1+math.Exp(-1)), 1/(1+math.Exp(1))
	ewCheck(t, "binary scores", out[1], graph.Float, ewShape(2, 2), []float64{1 - p, p, 1 - q, q}, 1e-6)
}
