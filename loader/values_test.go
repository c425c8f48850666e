package loader

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

func TestReadTensor(t *testing.T) {
	raw, err := proto.Marshal(&onnxpb.TensorProto{Name: proto.String("x"), Dims: []int64{2}, DataType: proto.Int32(1), FloatData: []float32{1.5, -2}})
	require.NoError(t, err)
	tt, err := ReadTensor(raw)
	require.NoError(t, err)
	require.Equal(t, []int64{2}, tt.Shape)
	require.Equal(t, -2.0, tt.Float64At(1))

	ext, err := proto.Marshal(&onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{1}, DataType: proto.Int32(1),
		DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("w.bin")}}})
	require.NoError(t, err)
	_, err = ReadTensor(ext)
	require.ErrorContains(t, err, `"w"`)

	_, err = ReadTensor([]byte{0xff, 0xff})
	require.Error(t, err)
}

func TestReadValueContainers(t *testing.T) {
	elem := &onnxpb.TensorProto{Dims: []int64{1}, DataType: proto.Int32(7), Int64Data: []int64{5}}
	seqRaw, err := proto.Marshal(&onnxpb.SequenceProto{ElemType: proto.Int32(1), TensorValues: []*onnxpb.TensorProto{elem, elem}})
	require.NoError(t, err)
	v, err := ReadValue(seqRaw, &graph.Type{Kind: graph.SequenceKind, Inner: graph.TensorType(graph.Int64, nil)})
	require.NoError(t, err)
	seq := v.(*graph.Sequence)
	require.Len(t, seq.Items, 2)
	require.Equal(t, 5.0, seq.Items[1].(*graph.Tensor).Float64At(0))

	emptyRaw, err := proto.Marshal(&onnxpb.OptionalProto{ElemType: proto.Int32(1)})
	require.NoError(t, err)
	v, err = ReadValue(emptyRaw, &graph.Type{Kind: graph.OptionalKind, Inner: graph.TensorType(graph.Float, nil)})
	require.NoError(t, err)
	require.Nil(t, v.(*graph.Optional).V)
	require.Equal(t, graph.Float, v.(*graph.Optional).Elem.Elem)

	optRaw, err := proto.Marshal(&onnxpb.OptionalProto{ElemType: proto.Int32(3), SequenceValue: &onnxpb.SequenceProto{ElemType: proto.Int32(1), TensorValues: []*onnxpb.TensorProto{elem}}})
	require.NoError(t, err)
	v, err = ReadValue(optRaw, &graph.Type{Kind: graph.OptionalKind})
	require.NoError(t, err)
	require.Len(t, v.(*graph.Optional).V.(*graph.Sequence).Items, 1)

	scalar := &onnxpb.TensorProto{DataType: proto.Int32(1), FloatData: []float32{2.5}}
	mapRaw, err := proto.Marshal(&onnxpb.MapProto{KeyType: proto.Int32(7), Keys: []int64{3, 4},
		Values: &onnxpb.SequenceProto{ElemType: proto.Int32(1), TensorValues: []*onnxpb.TensorProto{scalar, scalar}}})
	require.NoError(t, err)
	v, err = ReadValue(mapRaw, &graph.Type{Kind: graph.MapKind})
	require.NoError(t, err)
	m := v.(*graph.Map)
	require.Equal(t, 4.0, m.Keys.Float64At(1))
	require.Equal(t, []int64{2}, m.Values.(*graph.Tensor).Shape)

	badRaw, err := proto.Marshal(&onnxpb.SequenceProto{ElemType: proto.Int32(9)})
	require.NoError(t, err)
	_, err = ReadValue(badRaw, &graph.Type{Kind: graph.SequenceKind})
	require.Error(t, err)
}

// A SequenceProto read where a tensor is wanted is called what it is, not
// a segmented tensor (its tensors share field 3 with TensorProto.segment).
func TestReadTensorGivenSequence(t *testing.T) {
	elem := &onnxpb.TensorProto{Dims: []int64{1}, DataType: proto.Int32(7), Int64Data: []int64{5}}
	for _, name := range []string{"", "seq", "\xff\xff"} {
		raw, err := proto.Marshal(&onnxpb.SequenceProto{Name: proto.String(name), ElemType: proto.Int32(1), TensorValues: []*onnxpb.TensorProto{elem, elem}})
		require.NoError(t, err)
		_, err = ReadValue(raw, graph.TensorType(graph.Int64, nil))
		require.ErrorContains(t, err, "a SequenceProto of 2 tensors, not a TensorProto")
		require.NotContains(t, err.Error(), "segment")
	}
	// A TensorProto that really is segmented still says so.
	raw, err := proto.Marshal(&onnxpb.TensorProto{Dims: []int64{1}, DataType: proto.Int32(1), FloatData: []float32{1},
		Segment: &onnxpb.TensorProto_Segment{Begin: proto.Int64(0), End: proto.Int64(1)}})
	require.NoError(t, err)
	_, err = ReadTensor(raw)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "segmented tensors")
}
