package graph

import (
	"slices"
	"testing"
)

// TestCaptured: a node's subgraphs capture what they read from outside,
// at any depth, in the order first read; names they define, or define
// before reading, are not captured.
func TestCaptured(t *testing.T) {
	inner := NewGraph("inner")
	inner.Nodes = []*Node{
		{OpType: "Add", Inputs: []string{"a", "t"}, Outputs: []string{"u"}},
		{OpType: "Add", Inputs: []string{"u", "b"}, Outputs: []string{"v"}},
	}
	inner.Outputs = []*ValueInfo{{Name: "v"}, {Name: "w"}}
	body := NewGraph("body")
	body.Inputs = []*ValueInfo{{Name: "i"}}
	body.Initializers["k"] = Scalar(Float, float32(1))
	body.Nodes = []*Node{
		{OpType: "Add", Inputs: []string{"i", "k"}, Outputs: []string{"t"}},
		{OpType: "If", Inputs: []string{"c"}, Outputs: []string{"r"}, Attrs: map[string]*Attribute{
			"then_branch": {Name: "then_branch", Type: AttrGraph, G: inner},
			"else_branch": {Name: "else_branch", Type: AttrGraph, G: NewGraph("empty")},
		}},
		{OpType: "Add", Inputs: []string{"r", "a"}, Outputs: []string{"s"}},
	}
	body.Outputs = []*ValueInfo{{Name: "s"}, {Name: "b"}}
	loop := &Node{OpType: "Loop", Attrs: map[string]*Attribute{"body": {Name: "body", Type: AttrGraph, G: body}}}
	want := []string{"c", "a", "b", "w"}
	if got := Captured(loop); !slices.Equal(got, want) {
		t.Errorf("Captured = %q, want %q", got, want)
	}
	var c Captures
	for range 2 {
		if got := c.Of(loop); !slices.Equal(got, want) {
			t.Errorf("Captures.Of = %q, want %q", got, want)
		}
	}
}
