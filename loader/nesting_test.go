package loader

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// nestedIfModel returns a model of depth Ifs, each the then branch of the
// one before, reading the main graph's inputs c and x at the bottom.
func nestedIfModel(depth int) *onnxpb.ModelProto {
	bool1 := &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(9), Shape: &onnxpb.TensorShapeProto{}}}}
	float1 := &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(1), Shape: &onnxpb.TensorShapeProto{}}}}
	leaf := func(name, out string) *onnxpb.GraphProto {
		return &onnxpb.GraphProto{
			Name:   proto.String(name),
			Node:   []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"x"}, Output: []string{out}}},
			Output: []*onnxpb.ValueInfoProto{{Name: proto.String(out), Type: float1}},
		}
	}
	g := leaf("then_0", "y_0")
	for i := 1; i <= depth; i++ {
		out := fmt.Sprintf("y_%d", i)
		g = &onnxpb.GraphProto{
			Name: proto.String(fmt.Sprintf("then_%d", i)),
			Node: []*onnxpb.NodeProto{{OpType: proto.String("If"), Input: []string{"c"}, Output: []string{out}, Attribute: []*onnxpb.AttributeProto{
				{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g},
				{Name: proto.String("else_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: leaf(fmt.Sprintf("else_%d", i), fmt.Sprintf("e_%d", i))},
			}}},
			Output: []*onnxpb.ValueInfoProto{{Name: proto.String(out), Type: float1}},
		}
	}
	g.Input = []*onnxpb.ValueInfoProto{{Name: proto.String("c"), Type: bool1}, {Name: proto.String("x"), Type: float1}}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}}, Graph: g}
}

// TestNestingMemoryLinear: loading Ifs nested 300 deep allocates at most
// about three times what 100 do (issue 13: 3300 levels took 1.1 GB).
func TestNestingMemoryLinear(t *testing.T) {
	perDepth := map[int]uint64{}
	for _, depth := range []int{100, 300} {
		b, err := proto.Marshal(nestedIfModel(depth))
		if err != nil {
			t.Fatal(err)
		}
		perDepth[depth] = allocated(func() {
			m, err := LoadBytes(b, "nested")
			if err != nil {
				t.Fatal(err)
			}
			m.Close()
		})
		t.Logf("depth %d: %d bytes allocated", depth, perDepth[depth])
	}
	if perDepth[300] > 4*perDepth[100] {
		t.Errorf("loading 300 nested Ifs allocates %d bytes, 100 allocate %d: want at most 4 times as much", perDepth[300], perDepth[100])
	}
}
