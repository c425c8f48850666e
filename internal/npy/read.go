package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/onnxvk/onnxvk/graph"
)

// readChunk is the most Read allocates ahead of data it has not yet
// received, so a header that claims a huge array cannot exhaust memory.
const readChunk = 16 << 20

// Read reads one array from r and returns it as a tensor in row-major
// order. It consumes exactly the array's bytes, so several arrays written
// one after the other can be read in turn.
func Read(r io.Reader) (*graph.Tensor, error) {
	return read(r, -1)
}

// ReadFile reads the .npy file at path.
func ReadFile(path string) (*graph.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	t, err := read(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// read reads one array; avail, when not negative, bounds the bytes r can
// still deliver, which lets read allocate the data in one piece.
func read(r io.Reader, avail int64) (*graph.Tensor, error) {
	h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	dt, err := parseDescr(h.descr)
	if err != nil {
		return nil, err
	}
	n, err := elementCount(h.shape, dt.size)
	if err != nil {
		return nil, err
	}
	raw, err := readData(r, n*int64(dt.size), avail)
	if err != nil {
		return nil, err
	}
	if dt.bigEndian {
		swapBytes(raw, dt.swap)
	}
	if h.fortran {
		raw = fortranToC(raw, h.shape, dt.size)
	}
	switch dt.kind {
	case unicodeText:
		return decodeText(raw, h.shape, dt.size)
	case byteString:
		return decodeBytes(raw, h.shape, dt.size), nil
	}
	if dt.elem == graph.Bool {
		for i, b := range raw {
			if b != 0 {
				raw[i] = 1
			}
		}
	}
	return &graph.Tensor{DType: dt.elem, Shape: h.shape, Data: raw}, nil
}

// readHeader reads the magic string, the version and the header dictionary.
func readHeader(r io.Reader) (header, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return header{}, truncated("preamble", err)
	}
	if string(pre[:6]) != magic {
		return header{}, fmt.Errorf("%w: not a .npy file (bad magic)", ErrFormat)
	}
	major, minor := pre[6], pre[7]
	var lenBytes int
	switch {
	case major == 1 && minor == 0:
		lenBytes = 2
	case (major == 2 || major == 3) && minor == 0:
		lenBytes = 4
	default:
		return header{}, fmt.Errorf("%w: format version %d.%d", ErrUnsupported, major, minor)
	}
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:lenBytes]); err != nil {
		return header{}, truncated("header length", err)
	}
	hlen := binary.LittleEndian.Uint32(lb[:])
	if hlen > maxHeaderLen {
		return header{}, fmt.Errorf("%w: header of %d bytes exceeds the limit of %d", ErrFormat, hlen, maxHeaderLen)
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return header{}, truncated("header", err)
	}
	return parseHeader(string(buf))
}

// elementCount returns the number of elements of shape, checking that the
// array's byte size fits in an int.
func elementCount(shape []int64, size int) (int64, error) {
	n := int64(1)
	limit := int64(math.MaxInt)
	if size > 0 {
		limit /= int64(size)
	}
	for _, d := range shape {
		if d != 0 && n > limit/d {
			return 0, fmt.Errorf("%w: shape %v is too large", ErrFormat, shape)
		}
		n *= d
	}
	return n, nil
}

// readData reads exactly n bytes into an 8-byte-aligned buffer.
func readData(r io.Reader, n, avail int64) ([]byte, error) {
	first := min(n, readChunk)
	if avail >= 0 {
		if n > avail {
			return nil, fmt.Errorf("%w: data of %d bytes but only %d remain", ErrFormat, n, avail)
		}
		first = n
	}
	buf := graph.AllocBytes(first)
	got := 0
	for {
		k, err := io.ReadFull(r, buf[got:])
		got += k
		if err != nil {
			return nil, truncated(fmt.Sprintf("data (%d of %d bytes)", got, n), err)
		}
		if int64(got) == n {
			return buf, nil
		}
		grown := graph.AllocBytes(min(n, 2*int64(len(buf))))
		copy(grown, buf)
		buf = grown
	}
}

// truncated wraps a read error; running out of input is a format error.
func truncated(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: file ends in the %s", ErrFormat, what)
	}
	return fmt.Errorf("npy: reading the %s: %w", what, err)
}

// swapBytes reverses the byte order of each unit-sized group of b.
func swapBytes(b []byte, unit int) {
	if unit < 2 {
		return
	}
	for o := 0; o+unit <= len(b); o += unit {
		u := b[o : o+unit]
		for i, j := 0, unit-1; i < j; i, j = i+1, j-1 {
			u[i], u[j] = u[j], u[i]
		}
	}
}

// fortranToC reorders column-major elements of the given size into row-major
// order.
func fortranToC(src []byte, fullShape []int64, size int) []byte {
	// Dimensions of size 1 do not affect the layout.
	var shape []int64
	for _, d := range fullShape {
		if d != 1 {
			shape = append(shape, d)
		}
	}
	rank := len(shape)
	if rank < 2 || len(src) == 0 {
		return src
	}
	stride := make([]int64, rank)
	s := int64(size)
	for k, d := range shape {
		stride[k] = s
		s *= d
	}
	dst := graph.AllocBytes(int64(len(src)))
	idx := make([]int64, rank)
	var off int64
	for o := 0; o < len(dst); o += size {
		copy(dst[o:o+size], src[off:off+int64(size)])
		for k := rank - 1; k >= 0; k-- {
			idx[k]++
			off += stride[k]
			if idx[k] < shape[k] {
				break
			}
			off -= stride[k] * shape[k]
			idx[k] = 0
		}
	}
	return dst
}

// decodeText converts little-endian UTF-32 elements of size bytes, padded
// with NULs, to a String tensor.
func decodeText(raw []byte, shape []int64, size int) (*graph.Tensor, error) {
	t := graph.NewTensor(graph.String, shape)
	var b strings.Builder
	for i := range t.Strings {
		b.Reset()
		elem := raw[i*size : (i+1)*size]
		end := len(elem)
		for end >= 4 && binary.LittleEndian.Uint32(elem[end-4:end]) == 0 {
			end -= 4
		}
		for o := 0; o < end; o += 4 {
			c := binary.LittleEndian.Uint32(elem[o : o+4])
			if c > utf8.MaxRune || !utf8.ValidRune(rune(c)) {
				return nil, fmt.Errorf("%w: string element %d holds code point %#x, which UTF-8 cannot encode", ErrUnsupported, i, c)
			}
			b.WriteRune(rune(c))
		}
		t.Strings[i] = b.String()
	}
	return t, nil
}

// decodeBytes converts NUL-padded byte-string elements to a String tensor.
func decodeBytes(raw []byte, shape []int64, size int) *graph.Tensor {
	t := graph.NewTensor(graph.String, shape)
	for i := range t.Strings {
		t.Strings[i] = strings.TrimRight(string(raw[i*size:(i+1)*size]), "\x00")
	}
	return t
}
