package npy_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/npy"
)

// fixture returns the tensor testdata/gen.py stores for a dtype code: the
// values 0..23, transformed by kind, in shape [2 3 4].
func fixture(t *testing.T, code string) *graph.Tensor {
	t.Helper()
	shape := []int64{2, 3, 4}
	n := 24
	var (
		tt  *graph.Tensor
		err error
	)
	build := func(f func(i int) float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	half := build(func(i int) float64 { return float64(i-10) * 0.5 })
	signed := build(func(i int) float64 { return float64(i - 10) })
	unsigned := build(func(i int) float64 { return float64(i * 3) })
	switch code {
	case "f2":
		tt, err = graph.FromSlice(graph.Float16, shape, convert(half, func(x float64) uint16 { return float16.Fromfloat32(float32(x)).Bits() }))
	case "f4":
		tt, err = graph.FromSlice(graph.Float, shape, convert(half, func(x float64) float32 { return float32(x) }))
	case "f8":
		tt, err = graph.FromSlice(graph.Double, shape, half)
	case "i1":
		tt, err = graph.FromSlice(graph.Int8, shape, convert(signed, func(x float64) int8 { return int8(x) }))
	case "i2":
		tt, err = graph.FromSlice(graph.Int16, shape, convert(signed, func(x float64) int16 { return int16(x) }))
	case "i4":
		tt, err = graph.FromSlice(graph.Int32, shape, convert(signed, func(x float64) int32 { return int32(x) }))
	case "i8":
		tt, err = graph.FromSlice(graph.Int64, shape, convert(signed, func(x float64) int64 { return int64(x) }))
	case "u1":
		tt, err = graph.FromSlice(graph.Uint8, shape, convert(unsigned, func(x float64) uint8 { return uint8(x) }))
	case "u2":
		tt, err = graph.FromSlice(graph.Uint16, shape, convert(unsigned, func(x float64) uint16 { return uint16(x) }))
	case "u4":
		tt, err = graph.FromSlice(graph.Uint32, shape, convert(unsigned, func(x float64) uint32 { return uint32(x) }))
	case "u8":
		tt, err = graph.FromSlice(graph.Uint64, shape, convert(unsigned, func(x float64) uint64 { return uint64(x) }))
	case "b1":
		tt, err = graph.FromSlice(graph.Bool, shape, convert(signed, func(x float64) bool { return int(x+10)%3 == 0 }))
	case "c8":
		tt, err = graph.FromSlice(graph.Complex64, shape, convert(half, func(x float64) complex64 { return complex(float32(x), float32(2*x+10)) }))
	case "c16":
		tt, err = graph.FromSlice(graph.Complex128, shape, convert(half, func(x float64) complex128 { return complex(x, 2*x+10) }))
	default:
		t.Fatalf("no fixture for %q", code)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func convert[T any](v []float64, f func(float64) T) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

func strs(shape []int64, s ...string) *graph.Tensor {
	t := graph.NewTensor(graph.String, shape)
	copy(t.Strings, s)
	return t
}

func equal(t *testing.T, got, want *graph.Tensor) {
	t.Helper()
	if got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) {
		t.Fatalf("got %s%v, want %s%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	if !bytes.Equal(got.Data, want.Data) || !reflect.DeepEqual(got.Strings, want.Strings) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

var codes = []string{"f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1", "c8", "c16"}

var textValues = []string{"", "a", "h\u00e9llo", "\u65e5\u672c\u8a9e", "\U0001f642x"}

// fixtures maps the files testdata/gen.py writes to their expected tensors.
func fixtures(t *testing.T) map[string]*graph.Tensor {
	m := map[string]*graph.Tensor{}
	for _, c := range codes {
		m[c+".npy"] = fixture(t, c)
		if c != "i1" && c != "u1" && c != "b1" {
			m[c+"_be.npy"] = fixture(t, c)
		}
	}
	m["f4_fortran.npy"] = fixture(t, "f4")
	m["i8_be_fortran.npy"] = fixture(t, "i8")
	m["f8_v2.npy"] = fixture(t, "f8")
	m["i4_v3.npy"] = fixture(t, "i4")
	m["scalar.npy"] = graph.Scalar(graph.Double, 3.25)
	m["empty.npy"] = graph.NewTensor(graph.Float, []int64{0, 3})
	vec, err := graph.FromSlice(graph.Int64, []int64{5}, []int64{0, 1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	m["vector.npy"] = vec
	m["U.npy"] = strs([]int64{5}, textValues...)
	m["U_be.npy"] = strs([]int64{5}, textValues...)
	m["U_fortran.npy"] = strs([]int64{2, 3}, "a", "bb", "ccc", "dddd", "e", "")
	m["S.npy"] = strs([]int64{3}, "abc", "", "\xff\x00x")
	return m
}

func TestReadNumPyFiles(t *testing.T) {
	for name, want := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			got, err := npy.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			equal(t, got, want)
		})
	}
}

// TestWriteMatchesNumPy checks that Write reproduces numpy.save's bytes for
// the little-endian, C-ordered, version 1.0 fixtures.
func TestWriteMatchesNumPy(t *testing.T) {
	names := []string{"scalar.npy", "empty.npy", "vector.npy", "U.npy", "S.npy"}
	for _, c := range codes {
		names = append(names, c+".npy")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			file, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			tensor, err := npy.Read(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := npy.Write(&buf, tensor); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), file) {
				t.Fatalf("Write differs from numpy.save:\n got %q\nwant %q", buf.Bytes(), file)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	long := make([]int64, 25000)
	for i := range long {
		long[i] = 1
	}
	cases := map[string]*graph.Tensor{
		"bool":          graph.Scalar(graph.Bool, true),
		"float16":       graph.Scalar(graph.Float16, float16.Fromfloat32(-1.5).Bits()),
		"wide first":    graph.NewTensor(graph.Uint8, []int64{1234567890123456789, 0}),
		"header v2":     graph.NewTensor(graph.Float, long),
		"bytes":         strs([]int64{2, 1}, "\x00inner", "\xc3"),
		"empty strings": strs([]int64{0}),
		"text":          strs([]int64{1, 2}, "x\x00y", "\u00e9"),
	}
	for _, c := range codes {
		cases[c] = fixture(t, c)
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := npy.Write(&buf, want); err != nil {
				t.Fatal(err)
			}
			if want.DType != graph.String && (buf.Len()-len(want.Data))%64 != 0 {
				t.Errorf("header of %d bytes is not padded to 64", buf.Len()-len(want.Data))
			}
			got, err := npy.Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, got, want)
		})
	}
}

func TestReadConsecutive(t *testing.T) {
	var buf bytes.Buffer
	for _, c := range []string{"f4", "i8"} {
		if err := npy.Write(&buf, fixture(t, c)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"f4", "i8"} {
		got, err := npy.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, got, fixture(t, c))
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes left unread", buf.Len())
	}
}

// TestReadLargeStream reads an array larger than Read's first allocation
// from a reader of unknown length.
func TestReadLargeStream(t *testing.T) {
	want := graph.NewTensor(graph.Float, []int64{5, 1 << 20})
	v := graph.View[float32](want)
	for i := range v {
		v[i] = float32(i)
	}
	var buf bytes.Buffer
	if err := npy.Write(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := npy.Read(iotest.HalfReader(&buf))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, want)
}

func TestIOErrors(t *testing.T) {
	failure := errors.New("device on fire")
	if _, err := npy.Read(iotest.ErrReader(failure)); !errors.Is(err, failure) {
		t.Errorf("Read: got %v, want the reader's error", err)
	}
	if err := npy.Write(failingWriter{failure}, fixture(t, "f4")); !errors.Is(err, failure) {
		t.Errorf("Write: got %v, want the writer's error", err)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestWriteErrors(t *testing.T) {
	short := graph.NewTensor(graph.Float, []int64{2})
	short.Data = short.Data[:4]
	cases := []struct {
		name   string
		tensor *graph.Tensor
		want   error
	}{
		{"bfloat16", graph.NewTensor(graph.BFloat16, []int64{2}), npy.ErrUnsupported},
		{"float8", graph.NewTensor(graph.Float8E4M3FN, []int64{2}), npy.ErrUnsupported},
		{"int4", graph.NewTensor(graph.Int4, []int64{2}), npy.ErrUnsupported},
		{"undefined", &graph.Tensor{}, npy.ErrUnsupported},
		{"trailing NUL", strs([]int64{1}, "ab\x00"), npy.ErrUnsupported},
		{"short data", short, nil},
		{"negative dim", &graph.Tensor{DType: graph.Float, Shape: []int64{-1}}, nil},
		{"strings count", &graph.Tensor{DType: graph.String, Shape: []int64{2}, Strings: []string{"a"}}, nil},
		{"nil", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := npy.Write(&bytes.Buffer{}, c.tensor)
			if err == nil {
				t.Fatal("no error")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %q does not wrap %q", err, c.want)
			}
			if c.tensor != nil && c.want != nil && c.tensor.DType != graph.String && !strings.Contains(err.Error(), c.tensor.DType.String()) {
				t.Errorf("error %q does not name the type", err)
			}
		})
	}
}

// file assembles a .npy file from a version, a header dictionary and data.
func file(major byte, dict string, data []byte) []byte {
	b := []byte("\x93NUMPY")
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	b = append(b, dict...)
	return append(b, data...)
}

func TestReadHeaderVariants(t *testing.T) {
	data := []byte{1, 0, 0, 0, 2, 0, 0, 0}
	want, err := graph.FromSlice(graph.Int32, []int64{2}, []int32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, dict := range []string{
		"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n",
		`{"shape": (2,), "descr": "<i4", "fortran_order": True}`,
		"{'descr':'<i4','fortran_order':False,'shape':(2L,)}   \n",
		"{\t'descr': '<i4',\n 'fortran_order': False, 'shape': (2 ,) }",
	} {
		got, err := npy.Read(bytes.NewReader(file(1, dict, data)))
		if err != nil {
			t.Fatalf("%q: %v", dict, err)
		}
		equal(t, got, want)
	}
}

func TestReadBoolNormalised(t *testing.T) {
	got, err := npy.Read(bytes.NewReader(file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", []byte{0, 2, 255})))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, []byte{0, 1, 1}) {
		t.Fatalf("got %v, want [0 1 1]", got.Data)
	}
}

func TestReadErrors(t *testing.T) {
	dict := func(descr, shape string) string {
		return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	}
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, npy.ErrFormat},
		{"bad magic", []byte("PK\x03\x04 this is a zip"), npy.ErrFormat},
		{"short preamble", []byte("\x93NUMPY\x01"), npy.ErrFormat},
		{"version 4.0", append([]byte("\x93NUMPY\x04\x00"), 0, 0), npy.ErrUnsupported},
		{"short header", file(1, dict("<f4", "()"), nil)[:20], npy.ErrFormat},
		{"huge header", []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{"), npy.ErrFormat},
		{"not a dict", file(1, "[1, 2]", nil), npy.ErrFormat},
		{"missing key", file(1, "{'descr': '<f4', 'shape': ()}", nil), npy.ErrFormat},
		{"extra key", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", nil), npy.ErrFormat},
		{"duplicate key", file(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", nil), npy.ErrFormat},
		{"text after", file(1, dict("<f4", "()")+" x", make([]byte, 4)), npy.ErrFormat},
		{"negative dim", file(1, dict("<f4", "(-1,)"), nil), npy.ErrFormat},
		{"structured", file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", nil), npy.ErrUnsupported},
		{"object", file(1, dict("|O", "(1,)"), make([]byte, 8)), npy.ErrUnsupported},
		{"long double", file(1, dict("<f16", "(1,)"), make([]byte, 16)), npy.ErrUnsupported},
		{"datetime", file(1, dict("<M8[ns]", "(1,)"), make([]byte, 8)), npy.ErrUnsupported},
		{"native order", file(1, dict("=f4", "(1,)"), make([]byte, 4)), npy.ErrUnsupported},
		{"zero-width text", file(1, dict("<U0", "(1000000000000,)"), nil), npy.ErrFormat},
		{"short data", file(1, dict("<f4", "(3,)"), make([]byte, 8)), npy.ErrFormat},
		{"huge claim", file(1, dict("<f4", "(1099511627776,)"), make([]byte, 8)), npy.ErrFormat},
		{"overflow", file(1, dict("<f8", "(4294967296, 4294967296)"), nil), npy.ErrFormat},
		{"dim overflow", file(1, dict("<f8", "(99999999999999999999,)"), nil), npy.ErrFormat},
		{"surrogate", file(1, dict("<U1", "(1,)"), []byte{0x00, 0xd8, 0, 0}), npy.ErrUnsupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := npy.Read(bytes.NewReader(c.in))
			if !errors.Is(err, c.want) {
				t.Fatalf("got error %v, want one wrapping %q", err, c.want)
			}
		})
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npy")
	want := fixture(t, "c8")
	if err := npy.WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, want)

	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := npy.ReadFile(path); !errors.Is(err, npy.ErrFormat) || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated file: got %v, want a format error naming the file", err)
	}
	if _, err := npy.ReadFile(filepath.Join(dir, "missing.npy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
	if err := npy.WriteFile(filepath.Join(dir, "no", "such", "dir.npy"), want); err == nil {
		t.Error("WriteFile into a missing folder: no error")
	}
}

// FuzzRead checks that Read never panics, and that whatever it accepts is a
// consistent tensor that survives a write and a second read unchanged.
func FuzzRead(f *testing.F) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.npy"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := npy.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		n := got.NumElements()
		if got.DType == graph.String {
			if int64(len(got.Strings)) != n {
				t.Fatalf("%d strings for shape %v", len(got.Strings), got.Shape)
			}
		} else if int64(len(got.Data)) != got.DType.ByteSize(n) {
			t.Fatalf("%d bytes for %s%v", len(got.Data), got.DType, got.Shape)
		}
		var buf bytes.Buffer
		if err := npy.Write(&buf, got); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
		again, err := npy.Read(&buf)
		if err != nil {
			t.Fatalf("reading what was written: %v", err)
		}
		equal(t, again, got)
	})
}
