package graph

import (
	"errors"
	"fmt"
	"io"
)

// DefaultDomain is the ONNX operator domain "ai.onnx", which models write as
// the empty string. Domain strings are normalised to "" on load.
const DefaultDomain = ""

// Model is a loaded model: metadata, opset imports and the main graph.
// Model-local functions have already been inlined into the graph.
type Model struct {
	// Name is what error messages call the model: its file name, or a name
	// given by the caller.
	Name            string
	IRVersion       int64
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	DocString       string
	// Opsets maps an operator domain ("" for ai.onnx) to its imported version.
	Opsets   map[string]int64
	Metadata map[string]string
	Graph    *Graph
	// Configurations are the IR 11 multi-device configurations.
	Configurations []DeviceConfiguration
	// ExternalFiles lists the external data files the weights came from,
	// relative to the model's folder, in first-use order.
	ExternalFiles []string
	// Warnings says what the loader found amiss and mended (nodes out of
	// topological order, reordered).
	Warnings []string

	closers []io.Closer
}

// AddCloser registers a resource (a memory mapping, an open file) that backs
// tensors of the model; Close releases it.
func (m *Model) AddCloser(c io.Closer) { m.closers = append(m.closers, c) }

// Close releases the resources backing the model's tensors. Tensors of the
// model must not be used afterwards.
func (m *Model) Close() error {
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c.Close())
	}
	m.closers = nil
	return errors.Join(errs...)
}

// Opset returns the imported version of domain, or 0 if it is not imported.
func (m *Model) Opset(domain string) int64 { return m.Opsets[domain] }

// OpsetOf returns the version of n's domain whose schema n follows (see
// Node.Opset).
func (m *Model) OpsetOf(n *Node) int64 { return n.OpsetIn(m.Opsets) }

// ValueInfo is a named, typed value at a graph's boundary or inside it.
type ValueInfo struct {
	Name string
	Type *Type
	Doc  string
}

// Graph is a list of nodes in topological order plus its inputs, outputs
// and initializers. A subgraph (If/Loop/Scan body) has Parent set and may
// refer to values of enclosing graphs by name.
type Graph struct {
	Name    string
	Doc     string
	Inputs  []*ValueInfo
	Outputs []*ValueInfo
	// Initializers are the constant tensors of the graph by name. An
	// initializer that is also listed in Inputs is a default the caller may
	// override.
	Initializers map[string]*Tensor
	// SparseInitializers are kept in their sparse form until planned.
	SparseInitializers map[string]*SparseTensor
	// ValueInfo holds the known types of values, the boundary values
	// included; shape inference fills it in.
	ValueInfo map[string]*ValueInfo
	Nodes     []*Node
	Parent    *Graph
}

// NewGraph returns an empty graph with its maps allocated.
func NewGraph(name string) *Graph {
	return &Graph{
		Name:               name,
		Initializers:       map[string]*Tensor{},
		SparseInitializers: map[string]*SparseTensor{},
		ValueInfo:          map[string]*ValueInfo{},
	}
}

// TypeOf returns the known type of the named value in g or an enclosing
// graph, or nil.
func (g *Graph) TypeOf(name string) *Type {
	for s := g; s != nil; s = s.Parent {
		if vi, ok := s.ValueInfo[name]; ok && vi.Type != nil {
			return vi.Type
		}
		if t, ok := s.Initializers[name]; ok {
			return TensorType(t.DType, ShapeOf(t.Shape...))
		}
	}
	return nil
}

// SetType records the type of a value of g.
func (g *Graph) SetType(name string, t *Type) {
	if vi, ok := g.ValueInfo[name]; ok {
		vi.Type = t
		return
	}
	g.ValueInfo[name] = &ValueInfo{Name: name, Type: t}
}

// IsInput reports whether name is one of g's declared inputs.
func (g *Graph) IsInput(name string) bool {
	for _, in := range g.Inputs {
		if in.Name == name {
			return true
		}
	}
	return false
}

// Node is one operator application.
type Node struct {
	Name     string
	OpType   string
	Domain   string
	Overload string
	// Inputs and Outputs are value names; "" marks an omitted optional one.
	Inputs  []string
	Outputs []string
	Attrs   map[string]*Attribute
	Doc     string
	// Metadata holds the node's metadata_props.
	Metadata map[string]string
	// DeviceConfigs are the node's IR 11 multi-device annotations.
	DeviceConfigs []NodeDeviceConfiguration
	// Index is the node's position in its graph, for error messages.
	Index int
	// Opset, when not 0, is the version of the node's domain whose schema
	// the node follows, in place of the model's import of that domain:
	// canonicalization (ops.Canonicalize) sets it on the nodes it brings to
	// their op's newest form, and on the nodes it adds.
	Opset int64
	// Params holds the node's attributes read into its op's typed
	// parameters (a pointer to an ops.XParams), with the catalog's
	// defaults filled in; ops.ParseParams sets it at load, and nil means
	// they are read when asked for.
	Params any
}

// OpsetIn returns the version of n's domain whose schema n follows in a
// model importing opsets: n.Opset when set, else the import.
func (n *Node) OpsetIn(opsets map[string]int64) int64 {
	if n.Opset != 0 {
		return n.Opset
	}
	return opsets[n.Domain]
}

// String names the node for error messages: `node "conv1" (Conv, #3)`.
func (n *Node) String() string {
	op := n.OpType
	if n.Domain != "" {
		op = n.Domain + "." + op
	}
	return fmt.Sprintf("node %q (%s, #%d)", n.Name, op, n.Index)
}

// Input returns the i-th input name, or "" when it is absent.
func (n *Node) Input(i int) string {
	if i < len(n.Inputs) {
		return n.Inputs[i]
	}
	return ""
}

// AttrType is the type of an attribute's value, numbered as ONNX's
// AttributeProto.AttributeType.
type AttrType int32

// Attribute value types.
const (
	AttrUndefined     AttrType = 0
	AttrFloat         AttrType = 1
	AttrInt           AttrType = 2
	AttrString        AttrType = 3
	AttrTensor        AttrType = 4
	AttrGraph         AttrType = 5
	AttrFloats        AttrType = 6
	AttrInts          AttrType = 7
	AttrStrings       AttrType = 8
	AttrTensors       AttrType = 9
	AttrGraphs        AttrType = 10
	AttrSparseTensor  AttrType = 11
	AttrSparseTensors AttrType = 12
	AttrTypeProto     AttrType = 13
	AttrTypeProtos    AttrType = 14
)

var attrTypeNames = [...]string{"undefined", "float", "int", "string", "tensor", "graph",
	"floats", "ints", "strings", "tensors", "graphs", "sparse_tensor", "sparse_tensors",
	"type_proto", "type_protos"}

// String returns the ONNX name of the attribute type.
func (a AttrType) String() string {
	if a >= 0 && int(a) < len(attrTypeNames) {
		return attrTypeNames[a]
	}
	return fmt.Sprintf("attrtype(%d)", int32(a))
}

// Attribute is a node attribute. Only the field matching Type is meaningful.
type Attribute struct {
	Name          string
	Type          AttrType
	F             float32
	I             int64
	S             []byte
	T             *Tensor
	G             *Graph
	Sparse        *SparseTensor
	TP            *Type
	Floats        []float32
	Ints          []int64
	Strings       [][]byte
	Tensors       []*Tensor
	Graphs        []*Graph
	SparseTensors []*SparseTensor
	TPs           []*Type
	Doc           string
}

// Attr returns the named attribute, or nil.
func (n *Node) Attr(name string) *Attribute {
	if n.Attrs == nil {
		return nil
	}
	return n.Attrs[name]
}

// AttrInt returns the named int attribute, or def when it is absent.
func (n *Node) AttrInt(name string, def int64) int64 {
	if a := n.Attr(name); a != nil && a.Type == AttrInt {
		return a.I
	}
	return def
}

// AttrFloat returns the named float attribute, or def when it is absent.
func (n *Node) AttrFloat(name string, def float32) float32 {
	if a := n.Attr(name); a != nil && a.Type == AttrFloat {
		return a.F
	}
	return def
}

// AttrString returns the named string attribute, or def when it is absent.
func (n *Node) AttrString(name string, def string) string {
	if a := n.Attr(name); a != nil && a.Type == AttrString {
		return string(a.S)
	}
	return def
}

// AttrInts returns the named ints attribute, or def when it is absent.
func (n *Node) AttrInts(name string, def []int64) []int64 {
	if a := n.Attr(name); a != nil && a.Type == AttrInts {
		return a.Ints
	}
	return def
}

// AttrFloats returns the named floats attribute, or def when it is absent.
func (n *Node) AttrFloats(name string, def []float32) []float32 {
	if a := n.Attr(name); a != nil && a.Type == AttrFloats {
		return a.Floats
	}
	return def
}

// AttrStrings returns the named strings attribute as Go strings, or def.
func (n *Node) AttrStrings(name string, def []string) []string {
	if a := n.Attr(name); a != nil && a.Type == AttrStrings {
		out := make([]string, len(a.Strings))
		for i, s := range a.Strings {
			out[i] = string(s)
		}
		return out
	}
	return def
}

// AttrTensor returns the named tensor attribute, or nil.
func (n *Node) AttrTensor(name string) *Tensor {
	if a := n.Attr(name); a != nil && a.Type == AttrTensor {
		return a.T
	}
	return nil
}

// AttrGraph returns the named graph attribute, or nil.
func (n *Node) AttrGraph(name string) *Graph {
	if a := n.Attr(name); a != nil && a.Type == AttrGraph {
		return a.G
	}
	return nil
}

// SparseTensor is ONNX's sparse tensor: Values at Indices (either [NNZ] linear
// indices or [NNZ, rank] coordinates) in a dense tensor of shape Dims.
type SparseTensor struct {
	Values  *Tensor
	Indices *Tensor
	Dims    []int64
}

// DeviceConfiguration is an IR 11 multi-device configuration.
type DeviceConfiguration struct {
	Name       string
	NumDevices int32
	Devices    []string
}

// NodeDeviceConfiguration is one node's annotation for one configuration.
type NodeDeviceConfiguration struct {
	ConfigurationID string
	Sharding        []ShardingSpec
	PipelineStage   int32
	HasStage        bool
}

// ShardingSpec says how one input or output tensor of a node is split or
// replicated across devices.
type ShardingSpec struct {
	TensorName   string
	Devices      []int64
	DeviceGroups map[int64][]int64
	ShardedDims  []ShardedDim
}

// ShardedDim is one sharded axis; several SimpleShardings describe axes fused
// by a reshape.
type ShardedDim struct {
	Axis           int64
	SimpleSharding []SimpleSharding
}

// SimpleSharding splits a dimension (known by value or symbol) into NumShards.
type SimpleSharding struct {
	Dim       Dim
	NumShards int64
}
