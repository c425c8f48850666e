package loader

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

func isAligned8(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 }

// externalPB returns an external tensor stored at location; offset and
// length are left out when negative, checksum when empty.
func externalPB(name string, dt graph.DType, dims []int64, location string, offset, length int64, checksum string) *onnxpb.TensorProto {
	tp := tensorPB(name, dt, dims, nil)
	ext := onnxpb.TensorProto_EXTERNAL
	tp.DataLocation = &ext
	add := func(k, v string) {
		tp.ExternalData = append(tp.ExternalData, &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)})
	}
	add("location", location)
	if offset >= 0 {
		add("offset", strconv.FormatInt(offset, 10))
	}
	if length >= 0 {
		add("length", strconv.FormatInt(length, 10))
	}
	if checksum != "" {
		add("checksum", checksum)
	}
	return tp
}

// identityModelPB returns a valid model whose graph passes each initializer
// through an Identity node to a graph output.
func identityModelPB(inits ...*onnxpb.TensorProto) *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{Name: proto.String("g"), Initializer: inits}
	for _, tp := range inits {
		out := "out_" + tp.GetName()
		g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String("Identity"), Input: []string{tp.GetName()}, Output: []string{out}})
		g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: proto.String(out)})
	}
	return &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}},
		Graph:       g,
	}
}

func writeModelPB(t *testing.T, path string, mp *onnxpb.ModelProto) {
	t.Helper()
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func float32Bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func sha1Hex(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}

// externalFixture writes two data files into a fresh folder: a.bin holds
// [1 2 3] at offset 0, [4 5] at 4096 and [6] at the unaligned offset 4107;
// sub/b.bin holds int64 [7 8] at offset 0.
func externalFixture(t *testing.T) (dir string, inits []*onnxpb.TensorProto) {
	t.Helper()
	dir = t.TempDir()
	a := make([]byte, 4111)
	copy(a, float32Bytes(1, 2, 3))
	copy(a[4096:], float32Bytes(4, 5))
	copy(a[4107:], float32Bytes(6))
	if err := os.WriteFile(filepath.Join(dir, "a.bin"), a, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, 7)
	binary.LittleEndian.PutUint64(b[8:], 8)
	if err := os.WriteFile(filepath.Join(dir, "sub", "b.bin"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	inits = []*onnxpb.TensorProto{
		externalPB("w0", graph.Float, []int64{3}, "a.bin", -1, 12, sha1Hex(a[:12])),
		externalPB("w1", graph.Float, []int64{2}, "a.bin", 4096, 8, ""),
		externalPB("w2", graph.Float, []int64{1}, "a.bin", 4107, -1, ""),
		externalPB("w3", graph.Int64, []int64{2}, "sub/b.bin", 0, 16, strings.ToUpper(sha1Hex(b))),
	}
	return dir, inits
}

func checkFixtureValues(t *testing.T, m *graph.Model) {
	t.Helper()
	want := map[string][]float64{"w0": {1, 2, 3}, "w1": {4, 5}, "w2": {6}, "w3": {7, 8}}
	for name, vals := range want {
		tensor := m.Graph.Initializers[name]
		if tensor == nil {
			t.Fatalf("initializer %q missing", name)
		}
		if !isAligned8(tensor.Data) {
			t.Errorf("%s: data not 8-byte aligned", name)
		}
		for i, v := range vals {
			if got := tensor.Float64At(int64(i)); got != v {
				t.Errorf("%s[%d] = %g, want %g", name, i, got, v)
			}
		}
	}
	if got := strings.Join(m.ExternalFiles, ","); got != "a.bin,sub/b.bin" {
		t.Errorf("ExternalFiles = %v", m.ExternalFiles)
	}
}

func TestExternalDataLoad(t *testing.T) {
	dir, inits := externalFixture(t)
	path := filepath.Join(dir, "model.onnx")
	writeModelPB(t, path, identityModelPB(inits...))
	for _, opts := range [][]Option{nil, {WithoutMmap()}} {
		m, err := Load(path, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if m.Name != "model.onnx" {
			t.Errorf("Name = %q", m.Name)
		}
		checkFixtureValues(t, m)
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestExternalDataLoadBytes(t *testing.T) {
	dir, inits := externalFixture(t)
	b, err := proto.Marshal(identityModelPB(inits...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBytes(b, "mem"); !errors.Is(err, ErrExternalData) || !strings.Contains(err.Error(), `"w0"`) {
		t.Errorf("LoadBytes without a base folder: %v", err)
	}
	m, err := LoadBytes(b, "mem", WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checkFixtureValues(t, m)
}

// TestExternalDataZeroCopy checks that aligned tensors point into the shared
// mapping and unaligned ones are copied.
func TestExternalDataZeroCopy(t *testing.T) {
	dir, inits := externalFixture(t)
	m := &graph.Model{}
	defer m.Close()
	d := &decoder{ext: newExternalData(m, options{baseDir: dir})}
	mapping := func() []byte { return d.ext.files["a.bin"].data }
	inside := func(b []byte) bool {
		p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&mapping()[0]))
		return p >= lo && p < lo+uintptr(len(mapping()))
	}
	var got []*graph.Tensor
	for _, tp := range inits[:3] {
		tensor, err := d.tensor(tp)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tensor)
	}
	if len(d.ext.files) != 1 {
		t.Errorf("a.bin opened %d times", len(d.ext.files))
	}
	if !inside(got[0].Data) || !inside(got[1].Data) {
		t.Error("aligned external tensors were copied")
	}
	if inside(got[2].Data) {
		t.Error("unaligned external tensor was used in place")
	}
}

func TestExternalDataRefused(t *testing.T) {
	dir, _ := externalFixture(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.bin"), make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.bin"), filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.bin", filepath.Join(dir, "ok.bin")); err != nil {
		t.Fatal(err)
	}
	f := graph.Float
	tests := []struct {
		name string
		tp   *onnxpb.TensorProto
		want string
	}{
		{"absolute", externalPB("abs", f, []int64{1}, filepath.Join(outside, "secret.bin"), 0, 4, ""), "absolute"},
		{"dotdot", externalPB("dotdot", f, []int64{1}, "../secret.bin", 0, 4, ""), "leaves the model's folder"},
		{"inner dotdot", externalPB("inner", f, []int64{1}, "sub/../../secret.bin", 0, 4, ""), "leaves the model's folder"},
		{"backslash dotdot", externalPB("bslash", f, []int64{1}, `..\secret.bin`, 0, 4, ""), "leaves the model's folder"},
		{"symlink out", externalPB("symfile", f, []int64{1}, "link.bin", 0, 4, ""), "outside the model's folder"},
		{"symlinked folder out", externalPB("symdir", f, []int64{1}, "linkdir/secret.bin", 0, 4, ""), "outside the model's folder"},
		{"missing file", externalPB("missing", f, []int64{1}, "nope.bin", 0, 4, ""), "no such file"},
		{"empty location", externalPB("noloc", f, []int64{1}, "", 0, 4, ""), "no location"},
		{"directory", externalPB("dir", f, []int64{1}, "sub", 0, 4, ""), "not a regular file"},
		{"past the end", externalPB("past", f, []int64{2}, "a.bin", 4105, 8, ""), "past the end"},
		{"offset past the end", externalPB("offpast", f, []int64{1}, "a.bin", 1<<40, 4, ""), "past the end"},
		{"offset plus size past int64", externalPB("offmax", f, []int64{1}, "a.bin", math.MaxInt64-1, 4, ""), "bytes [9223372036854775806, +4) lie past the end"},
		{"huge dims, no length", externalPB("huge", f, []int64{1 << 30, 1 << 20}, "a.bin", 0, -1, ""), "past the end"},
		{"length disagrees", externalPB("len", f, []int64{3}, "a.bin", 0, 8, ""), "length 8 disagrees with the 12 bytes"},
		{"checksum", externalPB("sum", f, []int64{3}, "a.bin", 0, 12, sha1Hex([]byte("x"))), "SHA-1"},
		{"negative offset", externalPB("neg", f, []int64{1}, "a.bin", -1, 4, ""), ""},
		{"strings", externalPB("str", graph.String, []int64{1}, "a.bin", 0, 4, ""), "string tensors"},
	}
	// A negative offset cannot be written through externalPB's convention.
	tests[15].tp.ExternalData = append(tests[15].tp.ExternalData, &onnxpb.StringStringEntryProto{Key: proto.String("offset"), Value: proto.String("-4")})
	tests[15].want = "not a non-negative decimal integer"
	for _, tt := range tests {
		for _, opts := range [][]Option{nil, {WithoutMmap()}} {
			path := filepath.Join(dir, "m.onnx")
			writeModelPB(t, path, identityModelPB(tt.tp))
			m, err := Load(path, opts...)
			if err == nil {
				m.Close()
				t.Errorf("%s: loaded", tt.name)
				continue
			}
			msg := err.Error()
			if !errors.Is(err, ErrExternalData) || !strings.Contains(msg, `tensor "`+tt.tp.GetName()+`"`) || !strings.Contains(msg, tt.want) {
				t.Errorf("%s: error %q: want ErrExternalData naming the tensor and saying %q", tt.name, msg, tt.want)
			}
		}
	}
	// WithoutChecksums skips the SHA-1.
	writeModelPB(t, filepath.Join(dir, "m.onnx"), identityModelPB(externalPB("sum", f, []int64{3}, "a.bin", 0, 12, sha1Hex([]byte("x")))))
	m, err := Load(filepath.Join(dir, "m.onnx"), WithoutChecksums())
	if err != nil {
		t.Fatalf("a wrong SHA-1 WithoutChecksums: %v", err)
	}
	m.Close()
	// A symbolic link that stays inside the folder is fine.
	writeModelPB(t, filepath.Join(dir, "m.onnx"), identityModelPB(externalPB("ok", f, []int64{3}, "ok.bin", 0, 12, "")))
	m, err = Load(filepath.Join(dir, "m.onnx"))
	if err != nil {
		t.Fatalf("symlink inside the folder: %v", err)
	}
	m.Close()
}
