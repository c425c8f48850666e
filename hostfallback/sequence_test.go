package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// seqRun runs n on in and returns output 0 as a sequence.
func seqRun(t *testing.T, n *graph.Node, in ...graph.Value) *graph.Sequence {
	t.Helper()
	out, err := cfRun(t, n, 17, 1, nil, in...)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := out[0].(*graph.Sequence)
	if !ok {
		t.Fatalf("%s: got %v, want a sequence", n.OpType, valueTypeOf(out[0]))
	}
	return s
}

// seqFirsts returns the first element of each tensor of s.
func seqFirsts(s *graph.Sequence) []float64 {
	out := make([]float64, len(s.Items))
	for i, v := range s.Items {
		out[i] = v.(*graph.Tensor).Float64At(0)
	}
	return out
}

func TestSequenceBuilding(t *testing.T) {
	a, b, c := cfF32(t, []int64{1}, 1), cfF32(t, []int64{1}, 2), cfF32(t, []int64{1}, 3)
	s := seqRun(t, cfNode("SequenceConstruct", []string{"a", "b"}, []string{"s"}), a, b)
	a.Data[0] = 0xff // the sequence holds its own copies
	if got := seqFirsts(s); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("SequenceConstruct = %v", got)
	}
	ins := seqRun(t, cfNode("SequenceInsert", []string{"s", "c", "p"}, []string{"o"}), s, c, graph.Scalar(graph.Int64, int64(-1)))
	if got := seqFirsts(ins); got[0] != 1 || got[1] != 3 || got[2] != 2 {
		t.Fatalf("SequenceInsert at -1 = %v", got)
	}
	if len(s.Items) != 2 {
		t.Fatal("SequenceInsert changed its input")
	}
	back := seqRun(t, cfNode("SequenceInsert", []string{"s", "c"}, []string{"o"}), s, c)
	if got := seqFirsts(back); got[2] != 3 {
		t.Fatalf("SequenceInsert at the end = %v", got)
	}
	er := seqRun(t, cfNode("SequenceErase", []string{"s", "p"}, []string{"o"}), ins, graph.Scalar(graph.Int32, int32(0)))
	if got := seqFirsts(er); len(got) != 2 || got[0] != 3 {
		t.Fatalf("SequenceErase at 0 = %v", got)
	}
	last := seqRun(t, cfNode("SequenceErase", []string{"s"}, []string{"o"}), ins)
	if got := seqFirsts(last); len(got) != 2 || got[1] != 3 {
		t.Fatalf("SequenceErase at the end = %v", got)
	}
	out, err := cfRun(t, cfNode("SequenceAt", []string{"s", "p"}, []string{"o"}), 17, 1, nil, ins, graph.Scalar(graph.Int64, int64(-3)))
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "SequenceAt", out[0], []int64{1}, 1)
	if _, err := cfRun(t, cfNode("SequenceAt", []string{"s", "p"}, []string{"o"}), 17, 1, nil, ins, graph.Scalar(graph.Int64, int64(3))); err == nil {
		t.Fatal("SequenceAt past the end was accepted")
	}
	out, err = cfRun(t, cfNode("SequenceLength", []string{"s"}, []string{"o"}), 17, 1, nil, ins)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "SequenceLength", out[0], nil, 3)

	empty := seqRun(t, cfNode("SequenceEmpty", nil, []string{"o"}, "dtype", int64(graph.Int64)))
	if len(empty.Items) != 0 || empty.Elem.Elem != graph.Int64 {
		t.Fatalf("SequenceEmpty = %v", empty.ValueType())
	}
	if _, err := cfRun(t, cfNode("SequenceInsert", []string{"s", "c"}, []string{"o"}), 17, 1, nil, empty, c); err == nil {
		t.Fatal("inserting a float tensor into an int64 sequence was accepted")
	}
	if _, err := cfRun(t, cfNode("SequenceErase", []string{"s"}, []string{"o"}), 17, 1, nil, empty); err == nil {
		t.Fatal("erasing from an empty sequence was accepted")
	}
	if _, err := cfRun(t, cfNode("SequenceLength", []string{"s"}, []string{"o"}), 17, 1, nil, a); err == nil {
		t.Fatal("SequenceLength of a tensor was accepted")
	}
}

func TestSplitAndConcatSequences(t *testing.T) {
	x := cfF32(t, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	s := seqRun(t, cfNode("SplitToSequence", []string{"x"}, []string{"s"}, "axis", int64(1), "keepdims", int64(0)), x)
	if len(s.Items) != 3 {
		t.Fatalf("SplitToSequence gave %d parts", len(s.Items))
	}
	cfWant(t, "part 1", s.Items[1], []int64{2}, 2, 5)
	s = seqRun(t, cfNode("SplitToSequence", []string{"x", "n"}, []string{"s"}, "axis", int64(1)), x, graph.Scalar(graph.Int64, int64(2)))
	cfWant(t, "part 0", s.Items[0], []int64{2, 2}, 1, 2, 4, 5)
	cfWant(t, "part 1", s.Items[1], []int64{2, 1}, 3, 6)
	s = seqRun(t, cfNode("SplitToSequence", []string{"x", "n"}, []string{"s"}), x, cfI64(t, []int64{2}, 0, 2))
	cfWant(t, "empty part", s.Items[0], []int64{0, 3})
	if _, err := cfRun(t, cfNode("SplitToSequence", []string{"x", "n"}, []string{"s"}), 17, 1, nil, x, cfI64(t, []int64{2}, 1, 2)); err == nil {
		t.Fatal("a split not adding up to the axis length was accepted")
	}

	parts := seqRun(t, cfNode("SplitToSequence", []string{"x"}, []string{"s"}, "axis", int64(1), "keepdims", int64(0)), x)
	out, err := cfRun(t, cfNode("ConcatFromSequence", []string{"s"}, []string{"y"}, "axis", int64(-1), "new_axis", int64(1)), 17, 1, nil, parts)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "stacked", out[0], []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	out, err = cfRun(t, cfNode("ConcatFromSequence", []string{"s"}, []string{"y"}, "axis", int64(0)), 17, 1, nil, parts)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "joined", out[0], []int64{6}, 1, 4, 2, 5, 3, 6)
	if _, err := cfRun(t, cfNode("ConcatFromSequence", []string{"s"}, []string{"y"}, "axis", int64(0)), 17, 1, nil, &graph.Sequence{}); err == nil {
		t.Fatal("concatenating an empty sequence was accepted")
	}
}

func TestSequenceMap(t *testing.T) {
	body := cfGraph([]string{"x", "y"}, []string{"z"}, nil, cfNode("Add", []string{"x", "y"}, []string{"z"}))
	s := seqRun(t, cfNode("SequenceConstruct", []string{"a", "b"}, []string{"s"}), cfF32(t, []int64{1}, 1), cfF32(t, []int64{2}, 2, 3))
	out := seqRun(t, cfNode("SequenceMap", []string{"s", "t"}, []string{"o"}, "body", body), s, cfF32(t, []int64{1}, 10))
	cfWant(t, "element 0", out.Items[0], []int64{1}, 11)
	cfWant(t, "element 1", out.Items[1], []int64{2}, 12, 13)
	short := &graph.Sequence{Items: s.Items[:1]}
	if _, err := cfRun(t, cfNode("SequenceMap", []string{"s", "t"}, []string{"o"}, "body", body), 17, 1, nil, s, short); err == nil {
		t.Fatal("sequences of different lengths were accepted")
	}
}

func TestOptional(t *testing.T) {
	x := cfF32(t, []int64{1}, 5)
	out, err := cfRun(t, cfNode("Optional", []string{"x"}, []string{"o"}), 18, 1, nil, x)
	if err != nil {
		t.Fatal(err)
	}
	full := out[0].(*graph.Optional)
	emptyType := &graph.Type{Kind: graph.TensorKind, Elem: graph.Float}
	out, err = cfRun(t, cfNode("Optional", nil, []string{"o"}, "type", emptyType), 18, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	empty := out[0].(*graph.Optional)
	for _, tc := range []struct {
		in   graph.Value
		want float64
	}{{full, 1}, {empty, 0}, {x, 1}, {nil, 0}} {
		out, err := cfRun(t, cfNode("OptionalHasElement", []string{"o"}, []string{"b"}), 18, 1, nil, tc.in)
		if err != nil {
			t.Fatal(err)
		}
		cfWant(t, "OptionalHasElement", out[0], nil, tc.want)
	}
	out, err = cfRun(t, cfNode("OptionalGetElement", []string{"o"}, []string{"v"}), 18, 1, nil, full)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "OptionalGetElement", out[0], []int64{1}, 5)
	if _, err := cfRun(t, cfNode("OptionalGetElement", []string{"o"}, []string{"v"}), 18, 1, nil, empty); err == nil {
		t.Fatal("getting the element of an empty optional was accepted")
	}
	if _, err := cfRun(t, cfNode("Optional", nil, []string{"o"}), 18, 1, nil); err == nil {
		t.Fatal("an empty Optional without a type was accepted")
	}
}
