package loader

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// errUnknownValue marks errors about enumeration values (data types,
// attribute types) that this loader does not know; in a model of a newer IR
// version they mean the version is not supported.
var errUnknownValue = errors.New("unknown")

// decoder converts the messages of one ModelProto into the graph IR.
type decoder struct {
	ext *externalData
	// refs is non-nil while decoding a function body: it receives the
	// attributes that refer to the function's attributes.
	refs map[*graph.Node]map[string]string
}

// decodeModel fills m from mp and returns mp's model-local functions,
// decoded but not yet inlined. Mapped external files are registered with m
// as they are opened, so m.Close releases them even after an error.
func decodeModel(m *graph.Model, mp *onnxpb.ModelProto, o options) ([]*Function, error) {
	fns, err := decodeModelProto(m, mp, o)
	if err == nil {
		return fns, nil
	}
	if ir := mp.GetIrVersion(); ir > MaxIRVersion && errors.Is(err, errUnknownValue) {
		return nil, fmt.Errorf("loader: model %q: %w %d: this loader knows IR versions up to %d: %w", m.Name, ErrIRVersion, ir, MaxIRVersion, err)
	}
	if errors.Is(err, ErrIRVersion) || errors.Is(err, ErrUnsupported) || errors.Is(err, ErrExternalData) {
		return nil, fmt.Errorf("loader: model %q: %w", m.Name, err)
	}
	return nil, invalid(m, err)
}

func decodeModelProto(m *graph.Model, mp *onnxpb.ModelProto, o options) ([]*Function, error) {
	ir := mp.GetIrVersion()
	if ir < MinIRVersion {
		return nil, fmt.Errorf("%w %d: models before IR version %d (ONNX 1.0) are not supported", ErrIRVersion, ir, MinIRVersion)
	}
	if ir > MaxIRVersion {
		if where := unknownFields(mp.ProtoReflect(), "model", nil); len(where) > 0 {
			return nil, fmt.Errorf("%w %d: this loader knows IR versions up to %d and the model uses fields it does not know: %s",
				ErrIRVersion, ir, MaxIRVersion, joinLimited(where))
		}
	}
	m.IRVersion = ir
	m.ProducerName = mp.GetProducerName()
	m.ProducerVersion = mp.GetProducerVersion()
	m.Domain = mp.GetDomain()
	m.ModelVersion = mp.GetModelVersion()
	m.DocString = mp.GetDocString()
	var err error
	if m.Opsets, err = decodeOpsets(mp.OpsetImport); err != nil {
		return nil, err
	}
	if m.Metadata, err = decodeMetadata(mp.MetadataProps); err != nil {
		return nil, fmt.Errorf("model metadata: %w", err)
	}
	for i, c := range mp.Configuration {
		m.Configurations = append(m.Configurations, graph.DeviceConfiguration{
			Name:       c.GetName(),
			NumDevices: c.GetNumDevices(),
			Devices:    slices.Clone(c.Device),
		})
		if len(c.Device) > 0 && len(c.Device) != int(c.GetNumDevices()) {
			return nil, fmt.Errorf("device configuration #%d %q: %d devices listed for num_devices %d",
				i, c.GetName(), len(c.Device), c.GetNumDevices())
		}
	}
	d := &decoder{ext: newExternalData(m, o)}
	defer d.ext.finish()
	if mp.Graph != nil {
		if m.Graph, err = d.graph(mp.Graph, nil); err != nil {
			return nil, err
		}
	}
	fns := make([]*Function, 0, len(mp.Functions))
	for i, fp := range mp.Functions {
		f, err := d.function(fp)
		if err != nil {
			return nil, fmt.Errorf("function #%d %q: %w", i, fp.GetName(), err)
		}
		fns = append(fns, f)
	}
	return fns, nil
}

// joinLimited joins the places unknownFields found, showing one less than
// it collects so that a full list can say there are more.
func joinLimited(items []string) string {
	if len(items) < maxUnknownReports {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxUnknownReports-1], "; ") + "; and more"
}

func decodeOpsets(ids []*onnxpb.OperatorSetIdProto) (map[string]int64, error) {
	opsets := make(map[string]int64, len(ids))
	for _, id := range ids {
		dom := normDomain(id.GetDomain())
		if v, ok := opsets[dom]; ok && v != id.GetVersion() {
			return nil, fmt.Errorf("opset domain %s imported twice, at versions %d and %d", domainLabel(dom), v, id.GetVersion())
		}
		opsets[dom] = id.GetVersion()
	}
	return opsets, nil
}

// decodeMetadata turns metadata_props into a map, nil when there are none.
func decodeMetadata(props []*onnxpb.StringStringEntryProto) (map[string]string, error) {
	if len(props) == 0 {
		return nil, nil
	}
	md := make(map[string]string, len(props))
	for _, p := range props {
		if _, dup := md[p.GetKey()]; dup {
			return nil, fmt.Errorf("metadata key %q appears twice", p.GetKey())
		}
		md[p.GetKey()] = p.GetValue()
	}
	return md, nil
}

// graph decodes gp as a graph nested in parent (nil for the main graph and
// for graphs inside function bodies).
func (d *decoder) graph(gp *onnxpb.GraphProto, parent *graph.Graph) (*graph.Graph, error) {
	g, err := d.graphBody(gp, parent)
	if err != nil {
		return nil, fmt.Errorf("graph %q: %w", gp.GetName(), err)
	}
	return g, nil
}

func (d *decoder) graphBody(gp *onnxpb.GraphProto, parent *graph.Graph) (*graph.Graph, error) {
	g := graph.NewGraph(gp.GetName())
	g.Doc = gp.GetDocString()
	g.Parent = parent
	for i, tp := range gp.Initializer {
		name := tp.GetName()
		if name == "" {
			return nil, fmt.Errorf("initializer #%d has no name", i)
		}
		if _, dup := g.Initializers[name]; dup {
			return nil, fmt.Errorf("initializer %q is defined twice", name)
		}
		t, err := d.tensor(tp)
		if err != nil {
			return nil, err
		}
		g.Initializers[name] = t
	}
	for i, sp := range gp.SparseInitializer {
		name := sp.GetValues().GetName()
		if name == "" {
			return nil, fmt.Errorf("sparse initializer #%d has no name (its values tensor names it)", i)
		}
		_, dense := g.Initializers[name]
		if _, dup := g.SparseInitializers[name]; dup || dense {
			return nil, fmt.Errorf("initializer %q is defined twice", name)
		}
		st, err := d.sparse(sp)
		if err != nil {
			return nil, fmt.Errorf("sparse initializer %q: %w", name, err)
		}
		g.SparseInitializers[name] = st
	}
	var err error
	if g.Inputs, err = valueInfos(gp.Input, g.ValueInfo); err != nil {
		return nil, fmt.Errorf("inputs: %w", err)
	}
	if g.Outputs, err = valueInfos(gp.Output, g.ValueInfo); err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	if _, err = valueInfos(gp.ValueInfo, g.ValueInfo); err != nil {
		return nil, fmt.Errorf("value_info: %w", err)
	}
	for i, np := range gp.Node {
		n, err := d.node(np, g, i)
		if err != nil {
			return nil, err
		}
		g.Nodes = append(g.Nodes, n)
	}
	return g, nil
}

// valueInfos decodes vips and records each in known unless a value of that
// name is there already (graph inputs come first, then outputs, then the
// other values).
func valueInfos(vips []*onnxpb.ValueInfoProto, known map[string]*graph.ValueInfo) ([]*graph.ValueInfo, error) {
	var out []*graph.ValueInfo
	for i, vip := range vips {
		t, err := decodeType(vip.Type)
		if err != nil {
			return nil, fmt.Errorf("#%d %q: %w", i, vip.GetName(), err)
		}
		vi := &graph.ValueInfo{Name: vip.GetName(), Type: t, Doc: vip.GetDocString()}
		out = append(out, vi)
		if _, ok := known[vi.Name]; !ok {
			known[vi.Name] = vi
		}
	}
	return out, nil
}

// node decodes np, the idx-th node of g (g is nil in function bodies).
func (d *decoder) node(np *onnxpb.NodeProto, g *graph.Graph, idx int) (*graph.Node, error) {
	n := &graph.Node{
		Name:     np.GetName(),
		OpType:   np.GetOpType(),
		Domain:   normDomain(np.GetDomain()),
		Overload: np.GetOverload(),
		Inputs:   slices.Clone(np.Input),
		Outputs:  slices.Clone(np.Output),
		Doc:      np.GetDocString(),
		Index:    idx,
	}
	if err := d.nodeBody(n, np, g); err != nil {
		return nil, fmt.Errorf("%s: %w", n, err)
	}
	return n, nil
}

func (d *decoder) nodeBody(n *graph.Node, np *onnxpb.NodeProto, g *graph.Graph) error {
	var err error
	if n.Metadata, err = decodeMetadata(np.MetadataProps); err != nil {
		return err
	}
	if len(np.Attribute) > 0 {
		n.Attrs = make(map[string]*graph.Attribute, len(np.Attribute))
	}
	for i, ap := range np.Attribute {
		name := ap.GetName()
		if name == "" {
			return fmt.Errorf("attribute #%d has no name", i)
		}
		if _, dup := n.Attrs[name]; dup {
			return fmt.Errorf("attribute %q appears twice", name)
		}
		a, err := d.attribute(ap, g, n)
		if err != nil {
			return fmt.Errorf("attribute %q: %w", name, err)
		}
		n.Attrs[name] = a
	}
	for i, dc := range np.DeviceConfigurations {
		c, err := decodeNodeDeviceConfig(dc)
		if err != nil {
			return fmt.Errorf("device configuration #%d %q: %w", i, dc.GetConfigurationId(), err)
		}
		n.DeviceConfigs = append(n.DeviceConfigs, c)
	}
	return nil
}

// attribute decodes ap, an attribute of node n in graph g. Graph values
// become subgraphs of g.
func (d *decoder) attribute(ap *onnxpb.AttributeProto, g *graph.Graph, n *graph.Node) (*graph.Attribute, error) {
	a := &graph.Attribute{Name: ap.GetName(), Type: graph.AttrType(ap.GetType()), Doc: ap.GetDocString()}
	if ap.RefAttrName != nil {
		if d.refs == nil {
			return nil, fmt.Errorf("refers to attribute %q outside a function body", ap.GetRefAttrName())
		}
		if d.refs[n] == nil {
			d.refs[n] = map[string]string{}
		}
		d.refs[n][a.Name] = ap.GetRefAttrName()
		return a, nil
	}
	if a.Type == graph.AttrUndefined {
		a.Type = inferAttrType(ap)
	}
	var err error
	switch a.Type {
	case graph.AttrFloat:
		a.F = ap.GetF()
	case graph.AttrInt:
		a.I = ap.GetI()
	case graph.AttrString:
		a.S = ap.S
	case graph.AttrTensor:
		if ap.T == nil {
			return nil, errors.New("tensor attribute without a tensor")
		}
		a.T, err = d.tensor(ap.T)
	case graph.AttrGraph:
		if ap.G == nil {
			return nil, errors.New("graph attribute without a graph")
		}
		a.G, err = d.graph(ap.G, g)
	case graph.AttrSparseTensor:
		if ap.SparseTensor == nil {
			return nil, errors.New("sparse tensor attribute without a sparse tensor")
		}
		a.Sparse, err = d.sparse(ap.SparseTensor)
	case graph.AttrTypeProto:
		if ap.Tp == nil {
			return nil, errors.New("type attribute without a type")
		}
		a.TP, err = decodeType(ap.Tp)
	case graph.AttrFloats:
		a.Floats = ap.Floats
	case graph.AttrInts:
		a.Ints = ap.Ints
	case graph.AttrStrings:
		a.Strings = ap.Strings
	case graph.AttrTensors:
		a.Tensors = make([]*graph.Tensor, len(ap.Tensors))
		for i, tp := range ap.Tensors {
			if a.Tensors[i], err = d.tensor(tp); err != nil {
				return nil, fmt.Errorf("tensor #%d: %w", i, err)
			}
		}
	case graph.AttrGraphs:
		a.Graphs = make([]*graph.Graph, len(ap.Graphs))
		for i, gp := range ap.Graphs {
			if a.Graphs[i], err = d.graph(gp, g); err != nil {
				return nil, fmt.Errorf("graph #%d: %w", i, err)
			}
		}
	case graph.AttrSparseTensors:
		a.SparseTensors = make([]*graph.SparseTensor, len(ap.SparseTensors))
		for i, sp := range ap.SparseTensors {
			if a.SparseTensors[i], err = d.sparse(sp); err != nil {
				return nil, fmt.Errorf("sparse tensor #%d: %w", i, err)
			}
		}
	case graph.AttrTypeProtos:
		a.TPs = make([]*graph.Type, len(ap.TypeProtos))
		for i, tp := range ap.TypeProtos {
			if a.TPs[i], err = decodeType(tp); err != nil {
				return nil, fmt.Errorf("type #%d: %w", i, err)
			}
		}
	case graph.AttrUndefined:
		return nil, errors.New("attribute without a type or a value")
	default:
		return nil, fmt.Errorf("%w attribute type %d", errUnknownValue, int32(a.Type))
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// inferAttrType returns the type of an attribute written without one (as
// early exporters did), from the value field that is set.
func inferAttrType(ap *onnxpb.AttributeProto) graph.AttrType {
	switch {
	case ap.F != nil:
		return graph.AttrFloat
	case ap.I != nil:
		return graph.AttrInt
	case ap.S != nil:
		return graph.AttrString
	case ap.T != nil:
		return graph.AttrTensor
	case ap.G != nil:
		return graph.AttrGraph
	case ap.SparseTensor != nil:
		return graph.AttrSparseTensor
	case ap.Tp != nil:
		return graph.AttrTypeProto
	case len(ap.Floats) > 0:
		return graph.AttrFloats
	case len(ap.Ints) > 0:
		return graph.AttrInts
	case len(ap.Strings) > 0:
		return graph.AttrStrings
	case len(ap.Tensors) > 0:
		return graph.AttrTensors
	case len(ap.Graphs) > 0:
		return graph.AttrGraphs
	case len(ap.SparseTensors) > 0:
		return graph.AttrSparseTensors
	case len(ap.TypeProtos) > 0:
		return graph.AttrTypeProtos
	}
	return graph.AttrUndefined
}

// decodeType converts a TypeProto; nil gives nil (type unknown).
func decodeType(tp *onnxpb.TypeProto) (*graph.Type, error) {
	if tp == nil {
		return nil, nil
	}
	t := &graph.Type{Denotation: tp.GetDenotation()}
	var err error
	switch v := tp.Value.(type) {
	case *onnxpb.TypeProto_TensorType:
		t.Kind = graph.TensorKind
		if t.Elem, err = elemType(v.TensorType.GetElemType()); err == nil {
			t.Shape = decodeShape(v.TensorType.Shape)
		}
	case *onnxpb.TypeProto_SparseTensorType:
		t.Kind = graph.SparseTensorKind
		if t.Elem, err = elemType(v.SparseTensorType.GetElemType()); err == nil {
			t.Shape = decodeShape(v.SparseTensorType.Shape)
		}
	case *onnxpb.TypeProto_SequenceType:
		t.Kind = graph.SequenceKind
		t.Inner, err = decodeType(v.SequenceType.GetElemType())
	case *onnxpb.TypeProto_OptionalType:
		t.Kind = graph.OptionalKind
		t.Inner, err = decodeType(v.OptionalType.GetElemType())
	case *onnxpb.TypeProto_MapType:
		t.Kind = graph.MapKind
		if t.Elem, err = elemType(v.MapType.GetKeyType()); err == nil {
			t.Inner, err = decodeType(v.MapType.GetValueType())
		}
	case *onnxpb.TypeProto_OpaqueType:
		t.Kind = graph.OpaqueKind
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// elemType checks an element type number; 0 (undefined) is allowed.
func elemType(v int32) (graph.DType, error) {
	dt := graph.DType(v)
	if dt != graph.Undefined && !dt.Valid() {
		return graph.Undefined, fmt.Errorf("%w element type %d", errUnknownValue, v)
	}
	return dt, nil
}

// decodeShape converts a shape; an absent shape means an unknown rank.
// Negative sizes, which some exporters write for unknown dimensions, are
// read as unknown.
func decodeShape(sp *onnxpb.TensorShapeProto) graph.Shape {
	if sp == nil {
		return nil
	}
	s := make(graph.Shape, len(sp.Dim))
	for i, dp := range sp.Dim {
		switch v := dp.Value.(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			if v.DimValue >= 0 {
				s[i] = graph.DimOf(v.DimValue)
			} else {
				s[i] = graph.UnknownDim()
			}
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			s[i] = graph.SymDim(v.DimParam)
		default:
			s[i] = graph.UnknownDim()
		}
	}
	return s
}

func decodeNodeDeviceConfig(dc *onnxpb.NodeDeviceConfigurationProto) (graph.NodeDeviceConfiguration, error) {
	c := graph.NodeDeviceConfiguration{
		ConfigurationID: dc.GetConfigurationId(),
		PipelineStage:   dc.GetPipelineStage(),
		HasStage:        dc.PipelineStage != nil,
	}
	for _, sp := range dc.ShardingSpec {
		s := graph.ShardingSpec{TensorName: sp.GetTensorName(), Devices: slices.Clone(sp.Device)}
		for _, e := range sp.IndexToDeviceGroupMap {
			if s.DeviceGroups == nil {
				s.DeviceGroups = map[int64][]int64{}
			}
			if _, dup := s.DeviceGroups[e.GetKey()]; dup {
				return c, fmt.Errorf("sharding spec of %q: device group %d defined twice", s.TensorName, e.GetKey())
			}
			s.DeviceGroups[e.GetKey()] = slices.Clone(e.Value)
		}
		for _, sd := range sp.ShardedDim {
			dim := graph.ShardedDim{Axis: sd.GetAxis()}
			for _, ss := range sd.SimpleSharding {
				simple := graph.SimpleSharding{Dim: graph.UnknownDim(), NumShards: ss.GetNumShards()}
				switch v := ss.Dim.(type) {
				case *onnxpb.SimpleShardedDimProto_DimValue:
					simple.Dim = graph.DimOf(v.DimValue)
				case *onnxpb.SimpleShardedDimProto_DimParam:
					simple.Dim = graph.SymDim(v.DimParam)
				}
				dim.SimpleSharding = append(dim.SimpleSharding, simple)
			}
			s.ShardedDims = append(s.ShardedDims, dim)
		}
		c.Sharding = append(c.Sharding, s)
	}
	return c, nil
}

// function decodes a model-local function. Its body's attribute references
// are collected in the result's AttrRefs.
func (d *decoder) function(fp *onnxpb.FunctionProto) (*Function, error) {
	f := &Function{
		Domain:    normDomain(fp.GetDomain()),
		Name:      fp.GetName(),
		Overload:  fp.GetOverload(),
		Inputs:    slices.Clone(fp.Input),
		Outputs:   slices.Clone(fp.Output),
		AttrNames: slices.Clone(fp.Attribute),
		AttrRefs:  map[*graph.Node]map[string]string{},
		ValueInfo: map[string]*graph.ValueInfo{},
		Doc:       fp.GetDocString(),
	}
	var err error
	if f.Opsets, err = decodeOpsets(fp.OpsetImport); err != nil {
		return nil, err
	}
	if len(fp.AttributeProto) > 0 {
		f.AttrDefaults = make(map[string]*graph.Attribute, len(fp.AttributeProto))
	}
	for i, ap := range fp.AttributeProto {
		name := ap.GetName()
		if name == "" {
			return nil, fmt.Errorf("attribute default #%d has no name", i)
		}
		if _, dup := f.AttrDefaults[name]; dup {
			return nil, fmt.Errorf("attribute %q has two defaults", name)
		}
		a, err := d.attribute(ap, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("attribute default %q: %w", name, err)
		}
		f.AttrDefaults[name] = a
	}
	if _, err := valueInfos(fp.ValueInfo, f.ValueInfo); err != nil {
		return nil, fmt.Errorf("value_info: %w", err)
	}
	body := &decoder{ext: d.ext, refs: f.AttrRefs}
	for i, np := range fp.Node {
		n, err := body.node(np, nil, i)
		if err != nil {
			return nil, err
		}
		f.Nodes = append(f.Nodes, n)
	}
	return f, nil
}
