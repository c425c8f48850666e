package loader

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// tensorPB returns a TensorProto of the given type and dims; fill sets its
// value fields.
func tensorPB(name string, dt graph.DType, dims []int64, fill func(*onnxpb.TensorProto)) *onnxpb.TensorProto {
	tp := &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(dt)), Dims: dims}
	if fill != nil {
		fill(tp)
	}
	return tp
}

// decodeTensorPB decodes tp with a decoder that has no external data folder.
func decodeTensorPB(tp *onnxpb.TensorProto) (*graph.Tensor, error) {
	d := &decoder{ext: newExternalData(&graph.Model{}, options{})}
	return d.tensor(tp)
}

func TestTensorEncodings(t *testing.T) {
	i32 := func(v ...int32) func(*onnxpb.TensorProto) {
		return func(tp *onnxpb.TensorProto) { tp.Int32Data = v }
	}
	raw := func(b ...byte) func(*onnxpb.TensorProto) {
		return func(tp *onnxpb.TensorProto) { tp.RawData = b }
	}
	tests := []struct {
		name string
		tp   *onnxpb.TensorProto
		data []byte    // expected packed little-endian bytes
		f64  []float64 // expected Float64At values, when data is nil
	}{
		{"float raw", tensorPB("a", graph.Float, []int64{2}, raw(0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0)), nil, []float64{1, -2}},
		{"float float_data", tensorPB("a", graph.Float, []int64{2}, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{1, -2} }), nil, []float64{1, -2}},
		{"double double_data", tensorPB("a", graph.Double, []int64{1, 2}, func(tp *onnxpb.TensorProto) { tp.DoubleData = []float64{0.5, math.Inf(-1)} }), nil, []float64{0.5, math.Inf(-1)}},
		{"int32 int32_data", tensorPB("a", graph.Int32, []int64{2}, i32(-7, 1<<30)), nil, []float64{-7, 1 << 30}},
		{"int64 int64_data", tensorPB("a", graph.Int64, []int64{2}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{-1 << 40, 3} }), nil, []float64{-1 << 40, 3}},
		{"uint32 uint64_data", tensorPB("a", graph.Uint32, []int64{2}, func(tp *onnxpb.TensorProto) { tp.Uint64Data = []uint64{math.MaxUint32, 5} }), []byte{0xff, 0xff, 0xff, 0xff, 5, 0, 0, 0}, nil},
		{"uint64 uint64_data", tensorPB("a", graph.Uint64, []int64{1}, func(tp *onnxpb.TensorProto) { tp.Uint64Data = []uint64{1 << 63} }), []byte{0, 0, 0, 0, 0, 0, 0, 0x80}, nil},
		{"int8 int32_data", tensorPB("a", graph.Int8, []int64{3}, i32(-128, 127, -1)), []byte{0x80, 0x7f, 0xff}, nil},
		{"uint8 int32_data", tensorPB("a", graph.Uint8, []int64{2}, i32(255, 0)), []byte{0xff, 0}, nil},
		{"int16 int32_data", tensorPB("a", graph.Int16, []int64{2}, i32(-2, 0x1234)), []byte{0xfe, 0xff, 0x34, 0x12}, nil},
		{"uint16 int32_data", tensorPB("a", graph.Uint16, []int64{1}, i32(0xfffe)), []byte{0xfe, 0xff}, nil},
		{"bool int32_data", tensorPB("a", graph.Bool, []int64{3}, i32(1, 0, 5)), []byte{1, 0, 1}, nil},
		{"bool raw", tensorPB("a", graph.Bool, []int64{2}, raw(0, 1)), []byte{0, 1}, nil},
		{"float16 int32_data bits", tensorPB("a", graph.Float16, []int64{2}, i32(0x3c00, 0xc000)), nil, []float64{1, -2}},
		{"bfloat16 int32_data bits", tensorPB("a", graph.BFloat16, []int64{2}, i32(0x3f80, 0xc040)), nil, []float64{1, -3}},
		{"float16 raw", tensorPB("a", graph.Float16, []int64{1}, raw(0x00, 0x7c)), nil, []float64{math.Inf(1)}},
		{"e4m3fn int32_data", tensorPB("a", graph.Float8E4M3FN, []int64{2}, i32(0x38, 0xfe)), nil, []float64{1, -448}},
		{"e4m3fnuz int32_data", tensorPB("a", graph.Float8E4M3FNUZ, []int64{1}, i32(0x40)), nil, []float64{1}},
		{"e5m2 raw", tensorPB("a", graph.Float8E5M2, []int64{2}, raw(0x3c, 0x7b)), nil, []float64{1, 57344}},
		{"e5m2fnuz int32_data", tensorPB("a", graph.Float8E5M2FNUZ, []int64{1}, i32(0x40)), nil, []float64{1}},
		{"e8m0 int32_data", tensorPB("a", graph.Float8E8M0, []int64{2}, i32(0x7f, 0x81)), nil, []float64{1, 4}},
		{"int4 raw odd count", tensorPB("a", graph.Int4, []int64{3}, raw(0x8f, 0x07)), nil, []float64{-1, -8, 7}},
		{"int4 int32_data packed", tensorPB("a", graph.Int4, []int64{3}, i32(0x8f, 0x07)), nil, []float64{-1, -8, 7}},
		{"uint4 int32_data packed", tensorPB("a", graph.Uint4, []int64{4}, i32(0x21, 0xf0)), nil, []float64{1, 2, 0, 15}},
		{"float4e2m1 raw", tensorPB("a", graph.Float4E2M1, []int64{2}, raw(0xf2)), nil, []float64{1, -6}},
		{"float4e2m1 int32_data", tensorPB("a", graph.Float4E2M1, []int64{2}, i32(0x17)), nil, []float64{6, 0.5}},
		{"int2 raw", tensorPB("a", graph.Int2, []int64{5}, raw(0b10_01_11_00, 0b01)), nil, []float64{0, -1, 1, -2, 1}},
		{"uint2 int32_data", tensorPB("a", graph.Uint2, []int64{4}, i32(0b11_10_01_00)), nil, []float64{0, 1, 2, 3}},
		{"complex64 float_data pairs", tensorPB("a", graph.Complex64, []int64{2}, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{1, 2, 3, 4} }), nil, []float64{1, 3}},
		{"complex128 double_data pairs", tensorPB("a", graph.Complex128, []int64{1}, func(tp *onnxpb.TensorProto) { tp.DoubleData = []float64{-5, 6} }), nil, []float64{-5}},
		{"scalar", tensorPB("a", graph.Int64, nil, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{42} }), nil, []float64{42}},
		{"empty", tensorPB("a", graph.Float, []int64{0, 3}, nil), []byte{}, nil},
		{"empty raw", tensorPB("a", graph.Float, []int64{3, 0}, raw()), []byte{}, nil},
	}
	for _, tt := range tests {
		got, err := decodeTensorPB(tt.tp)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got.DType != graph.DType(tt.tp.GetDataType()) || len(got.Shape) != len(tt.tp.Dims) {
			t.Errorf("%s: got %s%v", tt.name, got.DType, got.Shape)
		}
		if len(got.Data) > 0 && !isAligned8(got.Data) {
			t.Errorf("%s: data is not 8-byte aligned", tt.name)
		}
		if tt.data != nil && !bytes.Equal(got.Data, tt.data) {
			t.Errorf("%s: data % x, want % x", tt.name, got.Data, tt.data)
		}
		for i, w := range tt.f64 {
			if v := got.Float64At(int64(i)); v != w {
				t.Errorf("%s: element %d = %g, want %g", tt.name, i, v, w)
			}
		}
	}
}

func TestTensorRawDataIsShared(t *testing.T) {
	raw := graph.AllocBytes(16)
	tp := tensorPB("w", graph.Float, []int64{4}, func(tp *onnxpb.TensorProto) { tp.RawData = raw })
	got, err := decodeTensorPB(tp)
	if err != nil {
		t.Fatal(err)
	}
	if &got.Data[0] != &raw[0] {
		t.Error("aligned raw_data was copied")
	}
	unaligned := graph.AllocBytes(17)[1:]
	tp.RawData = unaligned
	if got, err = decodeTensorPB(tp); err != nil {
		t.Fatal(err)
	}
	if &got.Data[0] == &unaligned[0] || !isAligned8(got.Data) {
		t.Error("unaligned raw_data was not copied to aligned memory")
	}
}

func TestTensorStrings(t *testing.T) {
	tp := tensorPB("s", graph.String, []int64{2}, func(tp *onnxpb.TensorProto) {
		tp.StringData = [][]byte{[]byte("héllo"), {}}
	})
	got, err := decodeTensorPB(tp)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Strings) != 2 || got.Strings[0] != "héllo" || got.Strings[1] != "" || got.Data != nil {
		t.Errorf("got %#v", got)
	}
}

func TestTensorErrors(t *testing.T) {
	tests := []struct {
		name string
		tp   *onnxpb.TensorProto
		want string
		is   error
	}{
		{"undefined type", tensorPB("t1", graph.Undefined, nil, nil), "undefined data type", nil},
		{"unknown type", tensorPB("t2", graph.DType(99), nil, nil), "unknown data type 99", nil},
		{"negative dim", tensorPB("t3", graph.Float, []int64{2, -1}, nil), "negative", nil},
		{"dims overflow", tensorPB("t4", graph.Float, []int64{1 << 40, 1 << 40}, func(tp *onnxpb.TensorProto) { tp.RawData = []byte{1} }), "2^56", nil},
		{"huge declared size, tiny data", tensorPB("t5", graph.Float, []int64{1 << 20, 1 << 20}, func(tp *onnxpb.TensorProto) { tp.RawData = []byte{1, 2, 3, 4} }), "raw_data holds 4 bytes", nil},
		{"huge declared size, typed", tensorPB("t6", graph.Double, []int64{1 << 50}, func(tp *onnxpb.TensorProto) { tp.DoubleData = []float64{1} }), "double_data holds 1 values", nil},
		{"too few values", tensorPB("t7", graph.Float, []int64{3}, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{1, 2} }), "float_data holds 2 values", nil},
		{"no data", tensorPB("t8", graph.Int64, []int64{2}, nil), "int64_data holds 0 values", nil},
		{"wrong field", tensorPB("t9", graph.Float, []int64{1}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{1} }), "float_data holds 0", nil},
		{"raw and typed", tensorPB("t10", graph.Float, []int64{1}, func(tp *onnxpb.TensorProto) {
			tp.RawData = []byte{0, 0, 0, 0}
			tp.FloatData = []float32{1}
		}), "both raw_data and float_data", nil},
		{"raw size", tensorPB("t11", graph.Int4, []int64{3}, func(tp *onnxpb.TensorProto) { tp.RawData = []byte{1} }), "needs 2", nil},
		{"int4 unpacked int32_data", tensorPB("t12", graph.Int4, []int64{4}, func(tp *onnxpb.TensorProto) { tp.Int32Data = []int32{1, 2, 3, 4} }), "needs 2", nil},
		{"complex64 odd count", tensorPB("t13", graph.Complex64, []int64{2}, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{1, 2, 3} }), "needs 4", nil},
		{"strings count", tensorPB("t14", graph.String, []int64{2}, func(tp *onnxpb.TensorProto) { tp.StringData = [][]byte{{'a'}} }), "1 strings for 2", nil},
		{"string raw", tensorPB("t15", graph.String, []int64{0}, func(tp *onnxpb.TensorProto) { tp.RawData = []byte{} }), "string tensor with raw_data", nil},
		{"segment", tensorPB("t16", graph.Float, []int64{1}, func(tp *onnxpb.TensorProto) {
			tp.Segment = &onnxpb.TensorProto_Segment{Begin: proto.Int64(0), End: proto.Int64(1)}
		}), "segment", ErrUnsupported},
		{"external_data without location flag", tensorPB("t17", graph.Float, []int64{1}, func(tp *onnxpb.TensorProto) {
			tp.ExternalData = []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("w.bin")}}
		}), "data_location is not EXTERNAL", nil},
		{"external without base dir", externalPB("t18", graph.Float, []int64{1}, "w.bin", -1, -1, ""), "WithBaseDir", ErrExternalData},
		{"external with values", func() *onnxpb.TensorProto {
			tp := externalPB("t19", graph.Float, []int64{1}, "w.bin", -1, -1, "")
			tp.RawData = []byte{0, 0, 0, 0}
			return tp
		}(), "also holds data", nil},
	}
	for _, tt := range tests {
		_, err := decodeTensorPB(tt.tp)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `"`+tt.tp.GetName()+`"`) {
			t.Errorf("%s: error %q does not mention %q and the tensor's name", tt.name, err, tt.want)
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: error %q does not wrap %v", tt.name, err, tt.is)
		}
	}
}

func TestSparseTensor(t *testing.T) {
	values := tensorPB("sp", graph.Float, []int64{2}, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{1, 2} })
	linear := tensorPB("", graph.Int64, []int64{2}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{0, 5} })
	coords := tensorPB("", graph.Int64, []int64{2, 2}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{0, 0, 1, 2} })
	d := &decoder{ext: newExternalData(&graph.Model{}, options{})}
	for _, idx := range []*onnxpb.TensorProto{linear, coords} {
		st, err := d.sparse(&onnxpb.SparseTensorProto{Values: values, Indices: idx, Dims: []int64{2, 3}})
		if err != nil {
			t.Fatal(err)
		}
		if st.Values.Float64At(1) != 2 || len(st.Dims) != 2 || st.Indices.Rank() != len(idx.Dims) {
			t.Errorf("got %+v", st)
		}
	}
	bad := []struct {
		name string
		sp   *onnxpb.SparseTensorProto
		want string
	}{
		{"linear index out of range", &onnxpb.SparseTensorProto{Values: values, Indices: tensorPB("", graph.Int64, []int64{2}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{0, 6} }), Dims: []int64{2, 3}}, "outside [0, 6)"},
		{"coordinate out of range", &onnxpb.SparseTensorProto{Values: values, Indices: tensorPB("", graph.Int64, []int64{2, 2}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{0, 0, 2, 0} }), Dims: []int64{2, 3}}, "outside [0, 2)"},
		{"negative index", &onnxpb.SparseTensorProto{Values: values, Indices: tensorPB("", graph.Int64, []int64{2}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{-1, 0} }), Dims: []int64{6}}, "outside"},
		{"int32 indices", &onnxpb.SparseTensorProto{Values: values, Indices: tensorPB("", graph.Int32, []int64{2}, func(tp *onnxpb.TensorProto) { tp.Int32Data = []int32{0, 1} }), Dims: []int64{6}}, "want int64"},
		{"index shape", &onnxpb.SparseTensorProto{Values: values, Indices: tensorPB("", graph.Int64, []int64{3}, func(tp *onnxpb.TensorProto) { tp.Int64Data = []int64{0, 1, 2} }), Dims: []int64{6}}, "want [2]"},
		{"no indices", &onnxpb.SparseTensorProto{Values: values, Dims: []int64{6}}, "without values or indices"},
		{"negative dims", &onnxpb.SparseTensorProto{Values: values, Indices: linear, Dims: []int64{-6}}, "negative"},
	}
	for _, tt := range bad {
		if _, err := d.sparse(tt.sp); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}
