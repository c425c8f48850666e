package loader

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

func floatAttrPB(name string, f float32) *onnxpb.AttributeProto {
	typ := onnxpb.AttributeProto_FLOAT
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: &typ, F: proto.Float32(f)}
}

func refAttrPB(name, ref string, typ onnxpb.AttributeProto_AttributeType) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: &typ, RefAttrName: proto.String(ref)}
}

// functionModelPB returns a model calling the local function
// custom.fn.ScaledRelu(X) = Elu(LeakyRelu(X, alpha=@alpha), alpha=@beta),
// where beta defaults to 3, once with alpha = 0.1.
func functionModelPB() *onnxpb.ModelProto {
	floatT := &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
		ElemType: proto.Int32(1),
		Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{
			{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}},
		}},
	}}}
	fn := &onnxpb.FunctionProto{
		Domain: proto.String("custom.fn"), Name: proto.String("ScaledRelu"),
		Input: []string{"X"}, Output: []string{"Y"},
		Attribute:      []string{"alpha"},
		AttributeProto: []*onnxpb.AttributeProto{floatAttrPB("beta", 3)},
		OpsetImport:    []*onnxpb.OperatorSetIdProto{{Domain: proto.String("ai.onnx"), Version: proto.Int64(17)}},
		ValueInfo:      []*onnxpb.ValueInfoProto{{Name: proto.String("T"), Type: floatT}},
		Node: []*onnxpb.NodeProto{
			{OpType: proto.String("LeakyRelu"), Input: []string{"X"}, Output: []string{"T"},
				Attribute: []*onnxpb.AttributeProto{refAttrPB("alpha", "alpha", onnxpb.AttributeProto_FLOAT)}},
			{OpType: proto.String("Elu"), Input: []string{"T"}, Output: []string{"Y"},
				Attribute: []*onnxpb.AttributeProto{refAttrPB("alpha", "beta", onnxpb.AttributeProto_FLOAT)}},
		},
	}
	return &onnxpb.ModelProto{
		IrVersion: proto.Int64(10),
		OpsetImport: []*onnxpb.OperatorSetIdProto{
			{Domain: proto.String(""), Version: proto.Int64(17)},
			{Domain: proto.String("custom.fn"), Version: proto.Int64(1)},
		},
		Functions: []*onnxpb.FunctionProto{fn},
		Graph: &onnxpb.GraphProto{
			Name:   proto.String("g"),
			Input:  []*onnxpb.ValueInfoProto{{Name: proto.String("x"), Type: floatT}},
			Output: []*onnxpb.ValueInfoProto{{Name: proto.String("y"), Type: floatT}},
			Node: []*onnxpb.NodeProto{{
				Name: proto.String("call"), OpType: proto.String("ScaledRelu"), Domain: proto.String("custom.fn"),
				Input: []string{"x"}, Output: []string{"y"},
				Attribute: []*onnxpb.AttributeProto{floatAttrPB("alpha", 0.1)},
			}},
		},
	}
}

func TestDecodeFunction(t *testing.T) {
	mp := functionModelPB()
	// A subgraph inside the body refers to the function's attribute too.
	ifNode := &onnxpb.NodeProto{OpType: proto.String("If"), Input: []string{"c"}, Output: []string{"r"},
		Attribute: []*onnxpb.AttributeProto{{
			Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(),
			G: &onnxpb.GraphProto{Name: proto.String("then"), Node: []*onnxpb.NodeProto{{
				OpType: proto.String("LeakyRelu"), Input: []string{"X"}, Output: []string{"r1"},
				Attribute: []*onnxpb.AttributeProto{refAttrPB("alpha", "alpha", onnxpb.AttributeProto_FLOAT)},
			}}},
		}}}
	fp := mp.Functions[0]
	fp.Node = append(fp.Node, ifNode)
	d := &decoder{ext: newExternalData(&graph.Model{}, options{})}
	f, err := d.function(fp)
	if err != nil {
		t.Fatal(err)
	}
	if f.Domain != "custom.fn" || f.Name != "ScaledRelu" || f.Opsets[""] != 17 || len(f.Nodes) != 3 {
		t.Fatalf("got %+v", f)
	}
	if f.AttrDefaults["beta"].F != 3 || len(f.AttrNames) != 1 || f.ValueInfo["T"].Type.Shape[0].Param != "N" {
		t.Errorf("attributes or value info wrong: %+v", f)
	}
	for i, want := range []string{"alpha", "beta"} {
		n := f.Nodes[i]
		if f.AttrRefs[n]["alpha"] != want {
			t.Errorf("node %d: AttrRefs = %v, want alpha -> %s", i, f.AttrRefs[n], want)
		}
		if a := n.Attrs["alpha"]; a == nil || a.Type != graph.AttrFloat {
			t.Errorf("node %d: placeholder attribute %+v", i, a)
		}
	}
	nested := f.Nodes[2].Attrs["then_branch"].G.Nodes[0]
	if f.AttrRefs[nested]["alpha"] != "alpha" {
		t.Errorf("reference inside a body subgraph not recorded: %v", f.AttrRefs)
	}
}

func TestLoadInlinesFunctions(t *testing.T) {
	m, err := loadPB(t, functionModelPB())
	if err != nil {
		t.Fatal(err)
	}
	nodes := m.Graph.Nodes
	if len(nodes) != 2 || nodes[0].OpType != "LeakyRelu" || nodes[1].OpType != "Elu" {
		t.Fatalf("nodes after inlining: %v", nodes)
	}
	if nodes[0].AttrFloat("alpha", 0) != 0.1 || nodes[1].AttrFloat("alpha", 0) != 3 {
		t.Errorf("attribute references resolved to %v and %v", nodes[0].Attrs["alpha"], nodes[1].Attrs["alpha"])
	}
	if nodes[0].Inputs[0] != "x" || nodes[1].Outputs[0] != "y" {
		t.Errorf("values not bound: %v %v", nodes[0].Inputs, nodes[1].Outputs)
	}
}

func TestDecodeModelErrors(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(mp *onnxpb.ModelProto)
		want  string
		isErr error
	}{
		{"ref outside a function", func(mp *onnxpb.ModelProto) {
			mp.Graph.Node[0].Attribute = append(mp.Graph.Node[0].Attribute, refAttrPB("beta", "x", onnxpb.AttributeProto_FLOAT))
		}, `attribute "beta": refers to attribute "x" outside a function body`, ErrInvalidModel},
		{"duplicate attribute", func(mp *onnxpb.ModelProto) {
			mp.Graph.Node[0].Attribute = append(mp.Graph.Node[0].Attribute, floatAttrPB("alpha", 1))
		}, `attribute "alpha" appears twice`, ErrInvalidModel},
		{"nameless attribute", func(mp *onnxpb.ModelProto) {
			mp.Graph.Node[0].Attribute = append(mp.Graph.Node[0].Attribute, &onnxpb.AttributeProto{F: proto.Float32(1)})
		}, "attribute #1 has no name", ErrInvalidModel},
		{"valueless attribute", func(mp *onnxpb.ModelProto) {
			mp.Graph.Node[0].Attribute = []*onnxpb.AttributeProto{{Name: proto.String("alpha")}}
		}, "without a type or a value", ErrInvalidModel},
		{"graph attribute without graph", func(mp *onnxpb.ModelProto) {
			mp.Graph.Node[0].Attribute = []*onnxpb.AttributeProto{{Name: proto.String("g"), Type: onnxpb.AttributeProto_GRAPH.Enum()}}
		}, "graph attribute without a graph", ErrInvalidModel},
		{"duplicate initializer", func(mp *onnxpb.ModelProto) {
			w := tensorPB("w", graph.Float, nil, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{1} })
			mp.Graph.Initializer = append(mp.Graph.Initializer, w, w)
		}, `initializer "w" is defined twice`, ErrInvalidModel},
		{"nameless initializer", func(mp *onnxpb.ModelProto) {
			mp.Graph.Initializer = append(mp.Graph.Initializer, tensorPB("", graph.Float, nil, nil))
		}, "initializer #0 has no name", ErrInvalidModel},
		{"opset twice", func(mp *onnxpb.ModelProto) {
			mp.OpsetImport = append(mp.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String("ai.onnx"), Version: proto.Int64(18)})
		}, "imported twice", ErrInvalidModel},
		{"metadata key twice", func(mp *onnxpb.ModelProto) {
			e := &onnxpb.StringStringEntryProto{Key: proto.String("k"), Value: proto.String("v")}
			mp.MetadataProps = append(mp.MetadataProps, e, e)
		}, `metadata key "k" appears twice`, ErrInvalidModel},
		{"device count", func(mp *onnxpb.ModelProto) {
			mp.Configuration = []*onnxpb.DeviceConfigurationProto{{Name: proto.String("c"), NumDevices: proto.Int32(2), Device: []string{"a"}}}
		}, "1 devices listed for num_devices 2", ErrInvalidModel},
		{"device group twice", func(mp *onnxpb.ModelProto) {
			e := &onnxpb.IntIntListEntryProto{Key: proto.Int64(5)}
			mp.Graph.Node[0].DeviceConfigurations = []*onnxpb.NodeDeviceConfigurationProto{{
				ShardingSpec: []*onnxpb.ShardingSpecProto{{IndexToDeviceGroupMap: []*onnxpb.IntIntListEntryProto{e, e}}},
			}}
		}, "device group 5 defined twice", ErrInvalidModel},
		{"function attribute default with a reference", func(mp *onnxpb.ModelProto) {
			mp.Functions[0].AttributeProto = append(mp.Functions[0].AttributeProto, refAttrPB("gamma", "alpha", onnxpb.AttributeProto_FLOAT))
		}, `function #0 "ScaledRelu": attribute default "gamma"`, ErrInvalidModel},
		{"bad tensor in a function", func(mp *onnxpb.ModelProto) {
			mp.Functions[0].Node[0].Attribute = append(mp.Functions[0].Node[0].Attribute, &onnxpb.AttributeProto{
				Name: proto.String("t"), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: tensorPB("bad", graph.Float, []int64{-1}, nil)})
		}, `tensor "bad": dimension 0 is negative`, ErrInvalidModel},
	}
	for _, tt := range tests {
		mp := functionModelPB()
		tt.edit(mp)
		_, err := loadPB(t, mp)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.isErr) {
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		}
	}
}

func TestLegacyAttributeWithoutType(t *testing.T) {
	mp := functionModelPB()
	mp.Graph.Node[0].Attribute[0].Type = nil
	m, err := loadPB(t, mp)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Graph.Nodes[0].AttrFloat("alpha", 0); got != 0.1 {
		t.Errorf("alpha = %v", got)
	}
}

func TestDomainNormalised(t *testing.T) {
	mp := functionModelPB()
	mp.OpsetImport[0].Domain = proto.String("ai.onnx")
	mp.Functions[0].Node[0].Domain = proto.String("ai.onnx")
	m, err := loadPB(t, mp)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Opsets[""]; !ok || m.Graph.Nodes[0].Domain != "" {
		t.Errorf("ai.onnx not normalised: opsets %v, node domain %q", m.Opsets, m.Graph.Nodes[0].Domain)
	}
}
