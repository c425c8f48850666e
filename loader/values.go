package loader

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// ReadTensor decodes a serialized TensorProto, as the ONNX test data stores
// inputs and outputs. External data is refused: the tensor has no folder.
func ReadTensor(data []byte) (*graph.Tensor, error) {
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(data, &tp); err != nil {
		return nil, fmt.Errorf("loader: TensorProto: %w", err)
	}
	d := &decoder{ext: newExternalData(&graph.Model{}, options{})}
	t, err := d.tensor(&tp)
	if err != nil {
		return nil, fmt.Errorf("loader: TensorProto %q: %w", tp.GetName(), err)
	}
	return t, nil
}

// ReadValueFile reads a value from a serialized protobuf file (.pb): a
// TensorProto.
func ReadValueFile(path string) (graph.Value, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loader: %w", err)
	}
	t, err := ReadTensor(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
