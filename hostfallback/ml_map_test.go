package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// mapCall runs a map kernel on one input value.
func mapCall(t *testing.T, op string, attrs ewAttrs, in graph.Value) (graph.Value, error) {
	t.Helper()
	n := ewNode(op, attrs)
	n.Domain = ops.DomainML
	n.Outputs = []string{"y"}
	c := &Call{Node: n, Opset: 1, In: []graph.Value{in}, Out: make([]graph.Value, 1)}
	err := Lookup(ops.DomainML, op)(c)
	return c.Out[0], err
}

func TestZipMap(t *testing.T) {
	x := ewF32(ewShape(2, 2), 0.25, 0.75, 1, 0)
	v, err := mapCall(t, "ZipMap", ewWith(ewStringsAttr("classlabels_strings", "a", "b")), x)
	if err != nil {
		t.Fatal(err)
	}
	seq, ok := v.(*graph.Sequence)
	if !ok || len(seq.Items) != 2 {
		t.Fatalf("got %T %v", v, v)
	}
	m := seq.Items[1].(*graph.Map)
	checkStrings(t, "keys", m.Keys, ewShape(2), "a", "b")
	ewCheck(t, "values", m.Values.(*graph.Tensor), graph.Float, ewShape(2), []float64{1, 0}, 0)
	if _, err := mapCall(t, "ZipMap", ewWith(ewInts("classlabels_int64s", 1, 2, 3)), x); err == nil {
		t.Error("no error for 3 labels of 2 columns")
	}
}

func TestCastMap(t *testing.T) {
	m := &graph.Map{Keys: xI64(ewShape(3), 5, 1, 3), Values: ewStrings(ewShape(3), "5.5", "1", "3")}
	v, err := mapCall(t, "CastMap", nil, m)
	if err != nil {
		t.Fatal(err)
	}
	ewCheck(t, "dense", v.(*graph.Tensor), graph.Float, ewShape(1, 3), []float64{1, 3, 5.5}, 0)
	v, err = mapCall(t, "CastMap", ewWith(ewString("map_form", "SPARSE"), ewInt("max_map", 6), ewString("cast_to", "TO_INT64")), m)
	if err != nil {
		t.Fatal(err)
	}
	ewCheck(t, "sparse", v.(*graph.Tensor), graph.Int64, ewShape(1, 6), []float64{0, 1, 0, 3, 0, 5}, 0)
	if _, err := mapCall(t, "CastMap", ewWith(ewString("map_form", "SPARSE"), ewInt("max_map", 2)), m); err == nil {
		t.Error("no error for a key beyond max_map")
	}
}

func TestDictVectorizer(t *testing.T) {
	m := &graph.Map{Keys: ewStrings(ewShape(2), "x", "y"), Values: xI64(ewShape(2), 7, 8)}
	v, err := mapCall(t, "DictVectorizer", ewWith(ewStringsAttr("string_vocabulary", "y", "z", "x")), m)
	if err != nil {
		t.Fatal(err)
	}
	ewCheck(t, "strings", v.(*graph.Tensor), graph.Int64, ewShape(1, 3), []float64{8, 0, 7}, 0)
	im := &graph.Map{Keys: xI64(ewShape(2), 4, 2), Values: ewF32(ewShape(2), 0.5, 1.5)}
	v, err = mapCall(t, "DictVectorizer", ewWith(ewInts("int64_vocabulary", 2, 3, 4)), im)
	if err != nil {
		t.Fatal(err)
	}
	ewCheck(t, "ints", v.(*graph.Tensor), graph.Float, ewShape(1, 3), []float64{1.5, 0, 0.5}, 0)
	if _, err := mapCall(t, "DictVectorizer", nil, x0()); err == nil {
		t.Error("no error for a tensor input")
	}
}

// x0 is a tensor where a map is expected.
func x0() graph.Value { return ewF32(ewShape(1), 0) }
