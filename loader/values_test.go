package loader

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

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
