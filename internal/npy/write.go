package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/onnxvk/onnxvk/graph"
)

// Layout constants of NumPy's writer: the header is padded so that the data
// starts at a multiple of arrayAlign, and room is left for the first
// dimension to grow to growthDigits digits.
const (
	arrayAlign   = 64
	growthDigits = 21
)

// Write writes t to w as numpy.save would write the equivalent array. String
// tensors are written as unicode text ('<U') when every element is valid
// UTF-8 and as bytes ('|S') otherwise; NumPy strips trailing NULs from such
// elements, so strings ending in NUL are rejected rather than altered.
func Write(w io.Writer, t *graph.Tensor) error {
	if t == nil {
		return errors.New("npy: nil tensor")
	}
	n, err := checkShape(t.Shape)
	if err != nil {
		return err
	}
	var descr string
	var data []byte
	if t.DType == graph.String {
		if int64(len(t.Strings)) != n {
			return fmt.Errorf("npy: string tensor of shape %v holds %d strings", t.Shape, len(t.Strings))
		}
		descr, data, err = encodeStrings(t.Strings)
		if err != nil {
			return err
		}
	} else {
		descr = numericDescr(t.DType)
		if descr == "" {
			return fmt.Errorf("%w: %s tensors have no NumPy dtype", ErrUnsupported, t.DType)
		}
		data = t.Data
		if want := t.DType.ByteSize(n); int64(len(data)) != want {
			return fmt.Errorf("npy: %s tensor of shape %v holds %d bytes, want %d", t.DType, t.Shape, len(data), want)
		}
	}
	if _, err := w.Write(encodeHeader(descr, t.Shape)); err != nil {
		return fmt.Errorf("npy: writing the header: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("npy: writing the data: %w", err)
	}
	return nil
}

// WriteFile writes t to a .npy file at path, replacing any file there.
func WriteFile(path string, t *graph.Tensor) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	if err := Write(f, t); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// checkShape returns the element count of a shape with no negative sizes.
func checkShape(shape []int64) (int64, error) {
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("npy: negative dimension in shape %v", shape)
		}
	}
	return elementCount(shape, 1)
}

// encodeHeader returns the preamble and header dictionary NumPy writes for a
// C-ordered array: version 1.0, or 2.0 when the header outgrows 1.0's
// 16-bit length.
func encodeHeader(descr string, shape []int64) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shapeRepr(shape))
	if len(shape) > 0 {
		dict += strings.Repeat(" ", max(0, growthDigits-len(fmt.Sprint(shape[0]))))
	}
	lenBytes := 2
	hlen := len(dict) + 1
	pad := arrayAlign - (len(magic)+2+lenBytes+hlen)%arrayAlign
	if hlen+pad > 0xffff {
		lenBytes = 4
		pad = arrayAlign - (len(magic)+2+lenBytes+hlen)%arrayAlign
	}
	out := make([]byte, 0, len(magic)+2+lenBytes+hlen+pad)
	out = append(out, magic...)
	if lenBytes == 2 {
		out = append(out, 1, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = append(out, 2, 0)
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, dict...)
	out = append(out, strings.Repeat(" ", pad)...)
	return append(out, '\n')
}

// encodeStrings returns the descriptor and the NUL-padded fixed-width data
// of a string array: UTF-32 text when every string is valid UTF-8, bytes
// otherwise.
func encodeStrings(ss []string) (string, []byte, error) {
	text := true
	width := 1
	for i, s := range ss {
		if strings.HasSuffix(s, "\x00") {
			return "", nil, fmt.Errorf("%w: string element %d ends in NUL, which NumPy strips", ErrUnsupported, i)
		}
		text = text && utf8.ValidString(s)
		width = max(width, len(s))
	}
	if !text {
		data := make([]byte, len(ss)*width)
		for i, s := range ss {
			copy(data[i*width:], s)
		}
		return fmt.Sprintf("|S%d", width), data, nil
	}
	width = 1
	for _, s := range ss {
		width = max(width, utf8.RuneCountInString(s))
	}
	data := make([]byte, len(ss)*width*4)
	for i, s := range ss {
		o := i * width * 4
		for _, r := range s {
			binary.LittleEndian.PutUint32(data[o:], uint32(r))
			o += 4
		}
	}
	return fmt.Sprintf("<U%d", width), data, nil
}
