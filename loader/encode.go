package loader

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// maxProtoSize is the largest serialized message protobuf readers accept.
const maxProtoSize = math.MaxInt32

// defaultAlignment is the offset alignment of tensors in external data files
// written by Save: a page, so that every tensor can be mapped in place.
const defaultAlignment = 4096

// SaveOption configures Save.
type SaveOption func(*saveConfig)

type saveConfig struct {
	external  bool
	location  string
	threshold int64
	align     int64
}

// WithExternalData makes Save write every tensor whose data takes at least
// threshold bytes (strings excepted) into the file location, relative to the
// model's folder, each starting at an offset that is a multiple of align
// (4096 when align <= 0). Smaller tensors stay in the model file.
func WithExternalData(location string, threshold, align int64) SaveOption {
	return func(c *saveConfig) {
		c.external, c.location, c.threshold, c.align = true, location, threshold, align
		if c.align <= 0 {
			c.align = defaultAlignment
		}
	}
}

// ToProto converts m into a ModelProto with every tensor stored inline.
// Tensor data is shared with the result, not copied.
func ToProto(m *graph.Model) (*onnxpb.ModelProto, error) {
	return (&encoder{}).model(m)
}

// Marshal serializes m as an ONNX model with every tensor inline. Models
// past protobuf's 2 GiB limit need Save with WithExternalData instead.
func Marshal(m *graph.Model) ([]byte, error) {
	mp, err := ToProto(m)
	if err != nil {
		return nil, err
	}
	return marshalProto(mp, m.Name)
}

func marshalProto(mp *onnxpb.ModelProto, name string) ([]byte, error) {
	opts := proto.MarshalOptions{Deterministic: true}
	if size := opts.Size(mp); size > maxProtoSize {
		return nil, fmt.Errorf("loader: model %q: %d bytes is past protobuf's 2 GiB limit: save the weights as external data", name, size)
	}
	b, err := opts.Marshal(mp)
	if err != nil {
		return nil, fmt.Errorf("loader: model %q: %w", name, err)
	}
	return b, nil
}

// Save writes m to path as an ONNX model file, with large tensors in an
// external data file when WithExternalData is given. Files are written
// under temporary names and renamed into place, so a model whose weights
// are mapped from the files being replaced stays valid.
func Save(m *graph.Model, path string, opts ...SaveOption) error {
	var c saveConfig
	for _, opt := range opts {
		opt(&c)
	}
	dir := filepath.Dir(path)
	enc := &encoder{}
	var ext *extWriter
	if c.external {
		if err := checkLocation(c.location); err != nil {
			return fmt.Errorf("loader: save %q: external data: %w", path, err)
		}
		extPath := filepath.Join(dir, filepath.FromSlash(c.location))
		if err := os.MkdirAll(filepath.Dir(extPath), 0o755); err != nil {
			return fmt.Errorf("loader: save %q: %w", path, err)
		}
		f, err := os.CreateTemp(filepath.Dir(extPath), ".onnxvk-data-*")
		if err != nil {
			return fmt.Errorf("loader: save %q: %w", path, err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		if err := f.Chmod(0o644); err != nil {
			return fmt.Errorf("loader: save %q: %w", path, err)
		}
		ext = &extWriter{cfg: c, path: extPath, f: f, w: bufio.NewWriterSize(f, 1<<20)}
		enc.ext = ext
	}
	mp, err := enc.model(m)
	if err == nil && ext != nil {
		err = ext.finish()
	}
	if err != nil {
		return fmt.Errorf("loader: save %q: %w", path, err)
	}
	data, err := marshalProto(mp, m.Name)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("loader: save %q: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path and renames it
// to path.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".onnxvk-model-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// extWriter appends tensor data to an external data file being written.
type extWriter struct {
	cfg  saveConfig
	path string
	f    *os.File
	w    *bufio.Writer
	off  int64
}

// write appends b at the next aligned offset and returns that offset.
func (x *extWriter) write(b []byte) (int64, error) {
	if pad := (x.cfg.align - x.off%x.cfg.align) % x.cfg.align; pad > 0 {
		if _, err := x.w.Write(make([]byte, pad)); err != nil {
			return 0, err
		}
		x.off += pad
	}
	off := x.off
	if _, err := x.w.Write(b); err != nil {
		return 0, err
	}
	x.off += int64(len(b))
	return off, nil
}

// finish flushes the file and renames it into place.
func (x *extWriter) finish() error {
	if err := x.w.Flush(); err != nil {
		return err
	}
	if err := x.f.Close(); err != nil {
		return err
	}
	return os.Rename(x.f.Name(), x.path)
}

// encoder converts the graph IR into protobuf messages.
type encoder struct {
	ext *extWriter // nil: every tensor inline
}

func (e *encoder) model(m *graph.Model) (*onnxpb.ModelProto, error) {
	if m == nil {
		return nil, errors.New("loader: nil model")
	}
	ir := m.IRVersion
	if ir == 0 {
		ir = MaxIRVersion
	}
	mp := &onnxpb.ModelProto{
		IrVersion:     proto.Int64(ir),
		MetadataProps: encodeMetadata(m.Metadata),
	}
	setString(&mp.ProducerName, m.ProducerName)
	setString(&mp.ProducerVersion, m.ProducerVersion)
	setString(&mp.Domain, m.Domain)
	setString(&mp.DocString, m.DocString)
	if m.ModelVersion != 0 {
		mp.ModelVersion = proto.Int64(m.ModelVersion)
	}
	mp.OpsetImport = encodeOpsets(m.Opsets)
	for _, c := range m.Configurations {
		mp.Configuration = append(mp.Configuration, &onnxpb.DeviceConfigurationProto{
			Name:       proto.String(c.Name),
			NumDevices: proto.Int32(c.NumDevices),
			Device:     c.Devices,
		})
	}
	if m.Graph != nil {
		g, err := e.graph(m.Graph)
		if err != nil {
			return nil, fmt.Errorf("loader: model %q: %w", m.Name, err)
		}
		mp.Graph = g
	}
	return mp, nil
}

// setString sets an optional string field when s is not empty.
func setString(dst **string, s string) {
	if s != "" {
		*dst = proto.String(s)
	}
}

func encodeOpsets(opsets map[string]int64) []*onnxpb.OperatorSetIdProto {
	out := make([]*onnxpb.OperatorSetIdProto, 0, len(opsets))
	for _, d := range slices.Sorted(maps.Keys(opsets)) {
		out = append(out, &onnxpb.OperatorSetIdProto{Domain: proto.String(d), Version: proto.Int64(opsets[d])})
	}
	return out
}

func encodeMetadata(md map[string]string) []*onnxpb.StringStringEntryProto {
	var out []*onnxpb.StringStringEntryProto
	for _, k := range slices.Sorted(maps.Keys(md)) {
		out = append(out, &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(md[k])})
	}
	return out
}

func (e *encoder) graph(g *graph.Graph) (*onnxpb.GraphProto, error) {
	if g == nil {
		return nil, errors.New("nil graph")
	}
	gp, err := e.graphBody(g)
	if err != nil {
		return nil, fmt.Errorf("graph %q: %w", g.Name, err)
	}
	return gp, nil
}

func (e *encoder) graphBody(g *graph.Graph) (*onnxpb.GraphProto, error) {
	gp := &onnxpb.GraphProto{Name: proto.String(g.Name)}
	setString(&gp.DocString, g.Doc)
	for _, name := range slices.Sorted(maps.Keys(g.Initializers)) {
		tp, err := e.tensor(g.Initializers[name], name)
		if err != nil {
			return nil, err
		}
		gp.Initializer = append(gp.Initializer, tp)
	}
	for _, name := range slices.Sorted(maps.Keys(g.SparseInitializers)) {
		sp, err := e.sparse(g.SparseInitializers[name], name)
		if err != nil {
			return nil, fmt.Errorf("sparse initializer %q: %w", name, err)
		}
		gp.SparseInitializer = append(gp.SparseInitializer, sp)
	}
	boundary := map[string]bool{}
	for i, vi := range g.Inputs {
		if vi == nil {
			return nil, fmt.Errorf("input #%d is nil", i)
		}
		gp.Input = append(gp.Input, encodeValueInfo(vi))
		boundary[vi.Name] = true
	}
	for i, vi := range g.Outputs {
		if vi == nil {
			return nil, fmt.Errorf("output #%d is nil", i)
		}
		gp.Output = append(gp.Output, encodeValueInfo(vi))
		boundary[vi.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(g.ValueInfo)) {
		if vi := g.ValueInfo[name]; !boundary[name] && vi != nil {
			gp.ValueInfo = append(gp.ValueInfo, encodeValueInfo(vi))
		}
	}
	for i, n := range g.Nodes {
		if n == nil {
			return nil, fmt.Errorf("node #%d is nil", i)
		}
		np, err := e.node(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		gp.Node = append(gp.Node, np)
	}
	return gp, nil
}

func encodeValueInfo(vi *graph.ValueInfo) *onnxpb.ValueInfoProto {
	vip := &onnxpb.ValueInfoProto{Name: proto.String(vi.Name), Type: encodeType(vi.Type)}
	setString(&vip.DocString, vi.Doc)
	return vip
}

func (e *encoder) node(n *graph.Node) (*onnxpb.NodeProto, error) {
	np := &onnxpb.NodeProto{
		Input:         n.Inputs,
		Output:        n.Outputs,
		OpType:        proto.String(n.OpType),
		MetadataProps: encodeMetadata(n.Metadata),
	}
	setString(&np.Name, n.Name)
	setString(&np.Domain, n.Domain)
	setString(&np.Overload, n.Overload)
	setString(&np.DocString, n.Doc)
	for _, name := range slices.Sorted(maps.Keys(n.Attrs)) {
		a := n.Attrs[name]
		if a == nil {
			continue
		}
		ap, err := e.attribute(a, name)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		np.Attribute = append(np.Attribute, ap)
	}
	for _, c := range n.DeviceConfigs {
		np.DeviceConfigurations = append(np.DeviceConfigurations, encodeNodeDeviceConfig(c))
	}
	return np, nil
}

func (e *encoder) attribute(a *graph.Attribute, name string) (*onnxpb.AttributeProto, error) {
	typ := onnxpb.AttributeProto_AttributeType(a.Type)
	ap := &onnxpb.AttributeProto{Name: proto.String(name), Type: &typ}
	setString(&ap.DocString, a.Doc)
	var err error
	switch a.Type {
	case graph.AttrFloat:
		ap.F = proto.Float32(a.F)
	case graph.AttrInt:
		ap.I = proto.Int64(a.I)
	case graph.AttrString:
		ap.S = a.S
	case graph.AttrTensor:
		if a.T == nil {
			return nil, errors.New("tensor attribute without a tensor")
		}
		ap.T, err = e.tensor(a.T, "")
	case graph.AttrGraph:
		if a.G == nil {
			return nil, errors.New("graph attribute without a graph")
		}
		ap.G, err = e.graph(a.G)
	case graph.AttrSparseTensor:
		if a.Sparse == nil {
			return nil, errors.New("sparse tensor attribute without a sparse tensor")
		}
		ap.SparseTensor, err = e.sparse(a.Sparse, "")
	case graph.AttrTypeProto:
		ap.Tp = encodeType(a.TP)
	case graph.AttrFloats:
		ap.Floats = a.Floats
	case graph.AttrInts:
		ap.Ints = a.Ints
	case graph.AttrStrings:
		ap.Strings = a.Strings
	case graph.AttrTensors:
		for i, t := range a.Tensors {
			tp, err := e.tensor(t, "")
			if err != nil {
				return nil, fmt.Errorf("tensor #%d: %w", i, err)
			}
			ap.Tensors = append(ap.Tensors, tp)
		}
	case graph.AttrGraphs:
		for i, g := range a.Graphs {
			gp, err := e.graph(g)
			if err != nil {
				return nil, fmt.Errorf("graph #%d: %w", i, err)
			}
			ap.Graphs = append(ap.Graphs, gp)
		}
	case graph.AttrSparseTensors:
		for i, s := range a.SparseTensors {
			sp, err := e.sparse(s, "")
			if err != nil {
				return nil, fmt.Errorf("sparse tensor #%d: %w", i, err)
			}
			ap.SparseTensors = append(ap.SparseTensors, sp)
		}
	case graph.AttrTypeProtos:
		for _, t := range a.TPs {
			ap.TypeProtos = append(ap.TypeProtos, encodeType(t))
		}
	default:
		return nil, fmt.Errorf("attribute type %s cannot be written", a.Type)
	}
	if err != nil {
		return nil, err
	}
	return ap, nil
}

// tensor encodes t under name, as raw_data (or string_data), or in the
// external data file when it is large enough.
func (e *encoder) tensor(t *graph.Tensor, name string) (*onnxpb.TensorProto, error) {
	tp, err := e.tensorProto(t, name)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return tp, nil
}

func (e *encoder) tensorProto(t *graph.Tensor, name string) (*onnxpb.TensorProto, error) {
	if t == nil {
		return nil, errors.New("nil tensor")
	}
	if !t.DType.Valid() {
		return nil, fmt.Errorf("invalid data type %s", t.DType)
	}
	n, err := elementCount(t.Shape)
	if err != nil {
		return nil, err
	}
	tp := &onnxpb.TensorProto{Dims: t.Shape, DataType: proto.Int32(int32(t.DType))}
	setString(&tp.Name, name)
	if t.DType == graph.String {
		if int64(len(t.Strings)) != n {
			return nil, fmt.Errorf("%d strings for %d elements", len(t.Strings), n)
		}
		tp.StringData = make([][]byte, n)
		for i, s := range t.Strings {
			tp.StringData[i] = []byte(s)
		}
		return tp, nil
	}
	if want := t.DType.ByteSize(n); int64(len(t.Data)) != want {
		return nil, fmt.Errorf("%d bytes of data, %s%v needs %d", len(t.Data), t.DType, t.Shape, want)
	}
	if e.ext == nil || int64(len(t.Data)) < e.ext.cfg.threshold {
		tp.RawData = t.Data
		if tp.RawData == nil {
			tp.RawData = []byte{}
		}
		return tp, nil
	}
	off, err := e.ext.write(t.Data)
	if err != nil {
		return nil, fmt.Errorf("writing external data: %w", err)
	}
	loc := onnxpb.TensorProto_EXTERNAL
	tp.DataLocation = &loc
	tp.ExternalData = []*onnxpb.StringStringEntryProto{
		{Key: proto.String("location"), Value: proto.String(e.ext.cfg.location)},
		{Key: proto.String("offset"), Value: proto.String(strconv.FormatInt(off, 10))},
		{Key: proto.String("length"), Value: proto.String(strconv.Itoa(len(t.Data)))},
	}
	return tp, nil
}

func (e *encoder) sparse(s *graph.SparseTensor, name string) (*onnxpb.SparseTensorProto, error) {
	if s == nil || s.Values == nil || s.Indices == nil {
		return nil, errors.New("sparse tensor without values or indices")
	}
	values, err := e.tensor(s.Values, name)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	indices, err := e.tensor(s.Indices, "")
	if err != nil {
		return nil, fmt.Errorf("indices: %w", err)
	}
	return &onnxpb.SparseTensorProto{Values: values, Indices: indices, Dims: s.Dims}, nil
}

// encodeType converts a type; nil gives nil.
func encodeType(t *graph.Type) *onnxpb.TypeProto {
	if t == nil {
		return nil
	}
	tp := &onnxpb.TypeProto{}
	setString(&tp.Denotation, t.Denotation)
	var elem *int32
	if t.Elem != graph.Undefined {
		elem = proto.Int32(int32(t.Elem))
	}
	switch t.Kind {
	case graph.TensorKind:
		tp.Value = &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: elem, Shape: encodeShape(t.Shape)}}
	case graph.SparseTensorKind:
		tp.Value = &onnxpb.TypeProto_SparseTensorType{SparseTensorType: &onnxpb.TypeProto_SparseTensor{ElemType: elem, Shape: encodeShape(t.Shape)}}
	case graph.SequenceKind:
		tp.Value = &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: encodeType(t.Inner)}}
	case graph.OptionalKind:
		tp.Value = &onnxpb.TypeProto_OptionalType{OptionalType: &onnxpb.TypeProto_Optional{ElemType: encodeType(t.Inner)}}
	case graph.MapKind:
		tp.Value = &onnxpb.TypeProto_MapType{MapType: &onnxpb.TypeProto_Map{KeyType: elem, ValueType: encodeType(t.Inner)}}
	case graph.OpaqueKind:
		tp.Value = &onnxpb.TypeProto_OpaqueType{OpaqueType: &onnxpb.TypeProto_Opaque{}}
	}
	return tp
}

// encodeShape converts a shape; a nil shape (unknown rank) gives nil.
func encodeShape(s graph.Shape) *onnxpb.TensorShapeProto {
	if s == nil {
		return nil
	}
	sp := &onnxpb.TensorShapeProto{Dim: make([]*onnxpb.TensorShapeProto_Dimension, len(s))}
	for i, d := range s {
		dp := &onnxpb.TensorShapeProto_Dimension{}
		switch {
		case d.Param != "":
			dp.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d.Param}
		case d.Value >= 0:
			dp.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d.Value}
		}
		sp.Dim[i] = dp
	}
	return sp
}

func encodeNodeDeviceConfig(c graph.NodeDeviceConfiguration) *onnxpb.NodeDeviceConfigurationProto {
	dc := &onnxpb.NodeDeviceConfigurationProto{ConfigurationId: proto.String(c.ConfigurationID)}
	if c.HasStage {
		dc.PipelineStage = proto.Int32(c.PipelineStage)
	}
	for _, s := range c.Sharding {
		sp := &onnxpb.ShardingSpecProto{TensorName: proto.String(s.TensorName), Device: s.Devices}
		for _, k := range slices.Sorted(maps.Keys(s.DeviceGroups)) {
			sp.IndexToDeviceGroupMap = append(sp.IndexToDeviceGroupMap,
				&onnxpb.IntIntListEntryProto{Key: proto.Int64(k), Value: s.DeviceGroups[k]})
		}
		for _, sd := range s.ShardedDims {
			dp := &onnxpb.ShardedDimProto{Axis: proto.Int64(sd.Axis)}
			for _, ss := range sd.SimpleSharding {
				sim := &onnxpb.SimpleShardedDimProto{NumShards: proto.Int64(ss.NumShards)}
				switch {
				case ss.Dim.Param != "":
					sim.Dim = &onnxpb.SimpleShardedDimProto_DimParam{DimParam: ss.Dim.Param}
				case ss.Dim.Value >= 0:
					sim.Dim = &onnxpb.SimpleShardedDimProto_DimValue{DimValue: ss.Dim.Value}
				}
				dp.SimpleSharding = append(dp.SimpleSharding, sim)
			}
			sp.ShardedDim = append(sp.ShardedDim, dp)
		}
		dc.ShardingSpec = append(dc.ShardingSpec, sp)
	}
	return dc
}
