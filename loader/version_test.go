package loader

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// versionModelPB returns a small valid model with the given IR version: a
// Relu node with an attribute-free op and a Constant with a tensor value.
func versionModelPB(ir int64) *onnxpb.ModelProto {
	w := tensorPB("w", graph.Float, []int64{1}, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{2} })
	mp := identityModelPB(w)
	mp.IrVersion = proto.Int64(ir)
	attrType := onnxpb.AttributeProto_FLOAT
	mp.Graph.Node = append(mp.Graph.Node, &onnxpb.NodeProto{
		OpType: proto.String("LeakyRelu"), Input: []string{"w"}, Output: []string{"lr"},
		Attribute: []*onnxpb.AttributeProto{{Name: proto.String("alpha"), Type: &attrType, F: proto.Float32(0.5)}},
	})
	mp.Graph.Output = append(mp.Graph.Output, &onnxpb.ValueInfoProto{Name: proto.String("lr")})
	return mp
}

// withUnknownField adds field 99 (a varint) to m's unknown fields.
func withUnknownField(m proto.Message) {
	r := m.ProtoReflect()
	b := protowire.AppendTag(r.GetUnknown(), 99, protowire.VarintType)
	r.SetUnknown(protowire.AppendVarint(b, 1))
}

func loadPB(t *testing.T, mp *onnxpb.ModelProto) (*graph.Model, error) {
	t.Helper()
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	return LoadBytes(b, "v.onnx")
}

func TestIRVersions(t *testing.T) {
	for ir := int64(-1); ir <= 14; ir++ {
		m, err := loadPB(t, versionModelPB(ir))
		if ir < MinIRVersion {
			if !errors.Is(err, ErrIRVersion) || !strings.Contains(err.Error(), "v.onnx") {
				t.Errorf("IR %d: error %v, want ErrIRVersion naming the model", ir, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("IR %d: %v", ir, err)
			continue
		}
		if m.IRVersion != ir {
			t.Errorf("IR %d: IRVersion = %d", ir, m.IRVersion)
		}
	}
}

func TestUnknownFields(t *testing.T) {
	places := []struct {
		name  string
		add   func(mp *onnxpb.ModelProto)
		where string
	}{
		{"model", func(mp *onnxpb.ModelProto) { withUnknownField(mp) }, "model (field 99)"},
		{"attribute", func(mp *onnxpb.ModelProto) { withUnknownField(mp.Graph.Node[1].Attribute[0]) }, "model.graph.node[1].attribute[0] (field 99)"},
		{"tensor", func(mp *onnxpb.ModelProto) { withUnknownField(mp.Graph.Initializer[0]) }, "model.graph.initializer[0] (field 99)"},
		{"output", func(mp *onnxpb.ModelProto) { withUnknownField(mp.Graph.Output[1]) }, "model.graph.output[1] (field 99)"},
	}
	for _, p := range places {
		newer := versionModelPB(MaxIRVersion + 1)
		p.add(newer)
		_, err := loadPB(t, newer)
		if !errors.Is(err, ErrIRVersion) || !strings.Contains(err.Error(), p.where) {
			t.Errorf("%s: IR %d with an unknown field: error %v, want ErrIRVersion naming %q", p.name, MaxIRVersion+1, err, p.where)
		}
		known := versionModelPB(MaxIRVersion)
		p.add(known)
		if _, err := loadPB(t, known); err != nil {
			t.Errorf("%s: IR %d with an unknown field: %v", p.name, MaxIRVersion, err)
		}
	}
}

// TestUnknownValues checks that attribute and element types newer than the
// loader are refused, as an unsupported IR version in newer models.
func TestUnknownValues(t *testing.T) {
	cases := []struct {
		name  string
		set   func(mp *onnxpb.ModelProto)
		where string
	}{
		{"attribute type", func(mp *onnxpb.ModelProto) {
			typ := onnxpb.AttributeProto_AttributeType(42)
			mp.Graph.Node[1].Attribute[0].Type = &typ
		}, `attribute "alpha": unknown attribute type 42`},
		{"data type", func(mp *onnxpb.ModelProto) { mp.Graph.Initializer[0].DataType = proto.Int32(27) }, `tensor "w": unknown data type 27`},
		{"data location", func(mp *onnxpb.ModelProto) {
			mp.Graph.Initializer[0].DataLocation = onnxpb.TensorProto_DataLocation(2).Enum()
		}, `tensor "w": unknown data_location 2`},
		{"element type", func(mp *onnxpb.ModelProto) {
			mp.Graph.Output[0].Type = &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(30)}}}
		}, "unknown element type 30"},
	}
	for _, c := range cases {
		for _, ir := range []int64{MaxIRVersion, MaxIRVersion + 1} {
			mp := versionModelPB(ir)
			c.set(mp)
			_, err := loadPB(t, mp)
			if err == nil || !strings.Contains(err.Error(), c.where) || errors.Is(err, ErrIRVersion) != (ir > MaxIRVersion) {
				t.Errorf("%s, IR %d: error %v", c.name, ir, err)
			}
		}
	}
}

func TestUnknownFieldReportIsBounded(t *testing.T) {
	mp := versionModelPB(MaxIRVersion + 2)
	for range 30 {
		n := &onnxpb.NodeProto{OpType: proto.String("Identity")}
		withUnknownField(n)
		mp.Graph.Node = append(mp.Graph.Node, n)
	}
	_, err := loadPB(t, mp)
	if err == nil || !strings.Contains(err.Error(), "node[6] (field 99); and more") || strings.Contains(err.Error(), "node[7]") {
		t.Errorf("error %v, want the first few places and a count", err)
	}
}
