package onnxvk

import (
	"fmt"
	"io"

	"github.com/onnxvk/onnxvk/loader"
)

// LoadReaderAt prepares the model of size bytes read by r: an ONNX zip
// archive or a serialized ModelProto (see loader.LoadReaderAt). An archive
// read from an *os.File is mapped and its weights used in place; from any
// other reader, the data entries the model references are read into memory.
// The model is called "model" in errors unless WithName says otherwise.
func LoadReaderAt(r io.ReaderAt, size int64, opts ...Option) (*Session, error) {
	o := collect(opts)
	name := o.name
	if name == "" {
		name = "model"
	}
	m, err := loader.LoadReaderAt(r, size, name, o.loaderOptions()...)
	if err != nil {
		return nil, fmt.Errorf("onnxvk: %w", err)
	}
	return newSession(m, o)
}
