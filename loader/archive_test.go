package loader

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// archiveModel is richModel with tensors large enough to get data entries,
// whose names sanitise to the same identifier ignoring case.
func archiveModel(t testing.TB) *graph.Model {
	m := richModel(t)
	fill := func(dt graph.DType, n int64, seed byte) *graph.Tensor {
		tt := graph.NewTensor(dt, []int64{n})
		for i := range tt.Data {
			tt.Data[i] = seed + byte(i*7)
		}
		return tt
	}
	m.Graph.Initializers["layer.0/weight"] = fill(graph.Float, 256, 1)
	m.Graph.Initializers["Layer_0_weight"] = fill(graph.Float, 300, 2)
	m.Graph.Initializers["0conv"] = fill(graph.Int64, 200, 3)
	m.Graph.Nodes[1].Attrs["t"].T = fill(graph.Float16, 600, 4)
	return m
}

// zipFile is what archive/zip says of one entry.
type zipFile struct {
	name    string
	method  uint16
	dataOff int64
}

// zipEntries lists an archive's entries with archive/zip, checking every
// CRC-32 by reading each entry to its end.
func zipEntries(t *testing.T, path string) []zipFile {
	t.Helper()
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	var out []zipFile
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, rc)
		require.NoError(t, err, "entry %q", f.Name)
		require.NoError(t, rc.Close())
		off, err := f.DataOffset()
		require.NoError(t, err)
		out = append(out, zipFile{f.Name, f.Method, off})
	}
	return out
}

// dataOffsets maps each entry name to the offset of its first data byte.
func dataOffsets(files []zipFile) map[string]int64 {
	offs := map[string]int64{}
	for _, f := range files {
		offs[f.name] = f.dataOff
	}
	return offs
}

// checkWithTools lists the archive with unzip -l and tests it with Python's
// zipfile, when they are installed.
func checkWithTools(t *testing.T, path string, wantLast string) {
	t.Helper()
	if _, err := exec.LookPath("unzip"); err != nil {
		testenv.Skip(t, "unzip is not installed")
	}
	out, err := exec.Command("unzip", "-l", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), ArchiveModelEntry)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		testenv.Skip(t, "/usr/bin/python3 is not installed")
	}
	script := `import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
assert bad is None, bad
print(z.namelist()[-1])`
	out, err = exec.Command("/usr/bin/python3", "-c", script, path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, wantLast, strings.TrimSpace(string(out)))
}

func TestArchiveRoundTrip(t *testing.T) {
	m := archiveModel(t)
	path := filepath.Join(t.TempDir(), "model.onnx")
	require.NoError(t, SaveArchive(m, path))

	files := zipEntries(t, path)
	require.Equal(t, ArchiveModelEntry, files[len(files)-1].name)
	lower := map[string]bool{}
	var names []string
	for _, f := range files[:len(files)-1] {
		require.Equal(t, zip.Store, f.method, f.name)
		require.True(t, isCIdentifier(f.name), f.name)
		require.False(t, lower[strings.ToLower(f.name)], "duplicate %q", f.name)
		lower[strings.ToLower(f.name)] = true
		require.Zero(t, f.dataOff%ArchiveAlignment, "entry %q at %d", f.name, f.dataOff)
		names = append(names, f.name)
	}
	require.ElementsMatch(t, []string{"_0conv", "Layer_0_weight", "layer_0_weight_2", "tensor"}, names)
	checkWithTools(t, path, ArchiveModelEntry)

	got, err := Load(path)
	require.NoError(t, err)
	defer got.Close()
	require.Equal(t, m.Graph, got.Graph)
	require.Empty(t, got.ExternalFiles)

	// Tensors point into one mapping of the file: the distance between two
	// of them is the distance between their entries.
	offs := dataOffsets(files)
	addr := func(name string) int64 {
		return int64(uintptr(unsafe.Pointer(unsafe.SliceData(got.Graph.Initializers[name].Data))))
	}
	require.Equal(t, offs["Layer_0_weight"]-offs["_0conv"], addr("Layer_0_weight")-addr("0conv"))
	require.Equal(t, offs["layer_0_weight_2"]-offs["_0conv"], addr("layer.0/weight")-addr("0conv"))
	require.Zero(t, addr("0conv")%ArchiveAlignment)

	// Saving over the file the loaded model maps must not disturb it.
	require.NoError(t, SaveArchive(got, path))
	again, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, m.Graph, again.Graph)
	require.Equal(t, m.Graph, got.Graph)
	require.NoError(t, again.Close())

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	fromFile, err := LoadReaderAt(f, st.Size(), "m")
	require.NoError(t, err)
	require.Equal(t, m.Graph, fromFile.Graph)
	require.NoError(t, fromFile.Close())

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	fromBytes, err := LoadReaderAt(bytes.NewReader(raw), int64(len(raw)), "m")
	require.NoError(t, err)
	require.Equal(t, m.Graph, fromBytes.Graph)
	require.NoError(t, fromBytes.Close())
	fromBytes, err = LoadBytes(raw, "m")
	require.NoError(t, err)
	clear(raw)
	require.Equal(t, m.Graph, fromBytes.Graph)
	noMmap, err := Load(path, WithoutMmap())
	require.NoError(t, err)
	require.Equal(t, m.Graph, noMmap.Graph)

	// A protobuf model loads through LoadReaderAt too.
	pb, err := Marshal(m)
	require.NoError(t, err)
	fromPB, err := LoadReaderAt(bytes.NewReader(pb), int64(len(pb)), "m")
	require.NoError(t, err)
	require.Equal(t, m.Graph, fromPB.Graph)
}

func TestRewriteArchiveModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.onnxz")
	require.NoError(t, SaveArchive(archiveModel(t), path))
	before := dataOffsets(zipEntries(t, path))

	m, err := Load(path)
	require.NoError(t, err)
	defer m.Close()
	m.Graph.Nodes[0].Name = "renamed_add"
	// A new small tensor goes inline, in the new ModelProto.
	m.Graph.Initializers["extra"] = mustTensor[float32](t, graph.Float, []int64{2}, 1, 2)
	require.NoError(t, RewriteArchiveModel(path, m))

	files := zipEntries(t, path)
	after := dataOffsets(files)
	delete(before, ArchiveModelEntry)
	delete(after, ArchiveModelEntry)
	require.Equal(t, before, after, "data entries moved")
	require.Equal(t, ArchiveModelEntry, files[len(files)-1].name)
	checkWithTools(t, path, ArchiveModelEntry)

	got, err := Load(path)
	require.NoError(t, err)
	defer got.Close()
	require.Equal(t, "renamed_add", got.Graph.Nodes[0].Name)
	require.Equal(t, m.Graph, got.Graph)

	// Every large tensor still references its entry.
	rc, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer rc.Close()
	r, err := rc.File[len(rc.File)-1].Open()
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	mp := &onnxpb.ModelProto{}
	require.NoError(t, proto.Unmarshal(b, mp))
	external := 0
	walkTensors(mp, func(tp *onnxpb.TensorProto) {
		if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
			external++
		}
	})
	require.Equal(t, 4, external)

	require.ErrorIs(t, RewriteArchiveModel(filepath.Join(t.TempDir(), "none"), m), os.ErrNotExist)
	plain := filepath.Join(t.TempDir(), "plain.onnx")
	require.NoError(t, Save(m, plain))
	require.ErrorIs(t, RewriteArchiveModel(plain, m), ErrArchive)
}

// zipTestEntry is an entry for writeZip.
type zipTestEntry struct {
	name   string
	data   []byte
	method uint16
}

// writeZip writes entries with archive/zip, which neither aligns nor
// checks names, and returns the file's bytes.
func writeZip(t testing.TB, entries ...zipTestEntry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		require.NoError(t, err)
		_, err = w.Write(e.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// alignedZip writes entries as SaveArchive does, all aligned but
// __MODEL_PROTO.
func alignedZip(t testing.TB, entries ...zipTestEntry) []byte {
	var buf bytes.Buffer
	z := newZipWriter(&buf, 0, nil)
	for _, e := range entries {
		require.NoError(t, z.add(e.name, e.data, e.name != ArchiveModelEntry))
	}
	require.NoError(t, z.finish())
	return buf.Bytes()
}

// smallArchiveModel references a 16-byte entry "w" as a float[4].
func smallArchiveModel(t testing.TB, location string, dims ...int64) []byte {
	b, err := proto.Marshal(identityModelPB(externalPB("w", graph.Float, dims, location, -1, -1, "")))
	require.NoError(t, err)
	return b
}

func loadArchiveBytes(b []byte, opts ...Option) (*graph.Model, error) {
	return LoadReaderAt(bytes.NewReader(b), int64(len(b)), "bad.onnx", opts...)
}

func TestArchiveSmall(t *testing.T) {
	w := float32Bytes(1, 2, 3, 4)
	model := smallArchiveModel(t, "w", 4)
	good := alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0})
	m, err := loadArchiveBytes(good)
	require.NoError(t, err)
	require.Equal(t, w, m.Graph.Initializers["w"].Data)

	// A deflated ModelProto is accepted; the data must be stored.
	deflated := writeZip(t, zipTestEntry{"pad", make([]byte, 22), 0}, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, zip.Deflate})
	_, err = loadArchiveBytes(deflated)
	require.ErrorContains(t, err, "not a multiple of 64")
	m, err = loadArchiveBytes(deflated, WithUnalignedArchive())
	require.NoError(t, err)
	require.Equal(t, w, m.Graph.Initializers["w"].Data)
}

// TestArchiveAlignment puts data entry "w" at offsets that are multiples
// of 8, 16 and 32 but not of 64 (and at a multiple of 64), shifted by the
// name of an empty entry before it and read back with archive/zip: only
// the multiple of 64 loads, the others only with WithUnalignedArchive.
func TestArchiveAlignment(t *testing.T) {
	w := float32Bytes(1, 2, 3, 4)
	model := smallArchiveModel(t, "w", 4)
	byResidue := map[int64][]byte{}
	for pad := "p"; len(byResidue) < ArchiveAlignment/8; pad += "p" {
		b := writeZip(t, zipTestEntry{pad, nil, 0}, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0})
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		off, err := zr.File[1].DataOffset()
		require.NoError(t, err)
		if off%8 == 0 && byResidue[off%ArchiveAlignment] == nil {
			byResidue[off%ArchiveAlignment] = b
		}
	}
	for residue, b := range byResidue {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		off, err := zr.File[1].DataOffset()
		require.NoError(t, err)
		_, err = loadArchiveBytes(b)
		if residue == 0 {
			require.NoError(t, err, "offset %d", off)
		} else {
			require.ErrorContains(t, err, fmt.Sprintf(`data entry "w" starts at offset %d, not a multiple of 64`, off))
		}
		m, err := loadArchiveBytes(b, WithUnalignedArchive())
		require.NoError(t, err, "offset %d", off)
		require.Equal(t, w, m.Graph.Initializers["w"].Data, "offset %d", off)
	}
}

func TestArchiveRefused(t *testing.T) {
	w := float32Bytes(1, 2, 3, 4)
	model := smallArchiveModel(t, "w", 4)
	good := alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0})
	// centralOf returns the offset of entry i's central directory record.
	centralOf := func(b []byte, i int) int {
		off := bytes.Index(b, []byte("PK\x01\x02"))
		for ; i > 0; i-- {
			off += centralHeaderLen + int(le16(b[off+28:])+le16(b[off+30:])+le16(b[off+32:]))
		}
		return off
	}
	patch := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	for _, c := range []struct {
		name, want string
		archive    []byte
	}{
		{"compressed", `data entry "w" is compressed`,
			writeZip(t, zipTestEntry{"w", w, zip.Deflate}, zipTestEntry{ArchiveModelEntry, model, 0})},
		{"misaligned", `data entry "w" starts at offset 31, not a multiple of 64`,
			writeZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0})},
		{"no model", "no __MODEL_PROTO entry", alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{"x", w, 0})},
		{"model first", "__MODEL_PROTO is not the last entry",
			alignedZip(t, zipTestEntry{ArchiveModelEntry, model, 0}, zipTestEntry{"w", w, 0}, zipTestEntry{"x", w, 0})},
		{"duplicate", `entries "w" and "W" have the same name ignoring case`,
			alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{"W", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0})},
		{"separator", `entry name "dir/w" contains a path separator`,
			alignedZip(t, zipTestEntry{"dir/w", w, 0}, zipTestEntry{ArchiveModelEntry, smallArchiveModel(t, "dir/w", 4), 0})},
		{"not identifier", `entry name "w.bin" is not a C identifier`,
			alignedZip(t, zipTestEntry{"w.bin", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0})},
		{"size", `entry "w" holds 16 bytes, the tensor needs 20`,
			alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, smallArchiveModel(t, "w", 5), 0})},
		{"missing entry", `no data entry "v" in the archive`,
			alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, smallArchiveModel(t, "v", 4), 0})},
		{"overlap", `entries "w" and "__MODEL_PROTO" overlap`, patch(func(b []byte) {
			c := centralOf(b, 0)
			binary.LittleEndian.PutUint32(b[c+20:], 40)
			binary.LittleEndian.PutUint32(b[c+24:], 40)
		})},
		{"past the end", "runs past the start of the central directory", patch(func(b []byte) {
			c := centralOf(b, 1)
			binary.LittleEndian.PutUint32(b[c+20:], 1<<20)
			binary.LittleEndian.PutUint32(b[c+24:], 1<<20)
		})},
		{"model crc", "__MODEL_PROTO has CRC-32", patch(func(b []byte) {
			binary.LittleEndian.PutUint32(b[centralOf(b, 1)+16:], 0)
		})},
		{"truncated", "no end of central directory record", good[:len(good)-10]},
		{"bad local header", "no local file header", patch(func(b []byte) {
			binary.LittleEndian.PutUint32(b[centralOf(b, 1)+42:], 2)
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadArchiveBytes(c.archive)
			require.Error(t, err)
			require.ErrorContains(t, err, c.want)
			if !errors.Is(err, ErrExternalData) {
				require.ErrorIs(t, err, ErrArchive)
			}
			// The same through Load, from a file mapped whole.
			path := filepath.Join(t.TempDir(), "bad.bin")
			require.NoError(t, os.WriteFile(path, c.archive, 0o644))
			_, err = Load(path)
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestEntryNames(t *testing.T) {
	n := newEntryNames()
	for _, c := range []struct{ in, want string }{
		{"conv.weight", "conv_weight"},
		{"Conv_Weight", "Conv_Weight_2"},
		{"", "tensor"},
		{"9", "_9"},
		{"__model_proto", "__model_proto_2"},
		{"é/x", "___x"},
		{strings.Repeat("a", 300), strings.Repeat("a", maxEntryName)},
	} {
		got := n.add(c.in)
		require.Equal(t, c.want, got, c.in)
		require.True(t, isCIdentifier(got))
	}
}

// TestArchiveZip64Entries writes an archive with more than 65535 entries, which
// needs the zip64 end records, and checks every reader agrees. A long
// suite: 6 s of a busy 2-core machine.
func TestArchiveZip64Entries(t *testing.T) {
	testenv.SkipLong(t)
	path := filepath.Join(t.TempDir(), "many.onnx")
	f, err := os.Create(path)
	require.NoError(t, err)
	z := newZipWriter(f, 0, nil)
	w := float32Bytes(1, 2, 3, 4)
	names := newEntryNames()
	for range 70000 {
		require.NoError(t, z.add(names.add("w"), w, true))
	}
	require.NoError(t, z.add(ArchiveModelEntry, smallArchiveModel(t, "w_70000", 4), false))
	require.NoError(t, z.finish())
	require.NoError(t, f.Close())

	m, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, w, m.Graph.Initializers["w"].Data)
	require.NoError(t, m.Close())
	require.Len(t, zipEntries(t, path), 70001)
	checkWithTools(t, path, ArchiveModelEntry)
}

// TestArchiveDataCRC: a data entry whose bytes disagree with its CRC-32 in
// the directory fails Load, naming the tensor and the entry, mapped or
// not, unless the caller opts out with WithoutChecksums.
func TestArchiveDataCRC(t *testing.T) {
	w := float32Bytes(1, 2, 3, 4)
	b := alignedZip(t, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, smallArchiveModel(t, "w", 4), 0})
	off := bytes.Index(b, w)
	b[off+5] ^= 1
	want := fmt.Sprintf(`entry "w" has CRC-32 %08x, the directory says %08x`, crc32.ChecksumIEEE(b[off:off+len(w)]), crc32.ChecksumIEEE(w))
	path := filepath.Join(t.TempDir(), "tampered.onnx")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	for _, load := range []func(...Option) (*graph.Model, error){
		func(o ...Option) (*graph.Model, error) { return loadArchiveBytes(b, o...) },
		func(o ...Option) (*graph.Model, error) { return Load(path, o...) },
		func(o ...Option) (*graph.Model, error) { return Load(path, append(o, WithoutMmap())...) },
	} {
		_, err := load()
		require.ErrorIs(t, err, ErrArchive)
		require.ErrorContains(t, err, `tensor "w"`)
		require.ErrorContains(t, err, want)
		m, err := load(WithoutChecksums())
		require.NoError(t, err)
		require.NotEqual(t, w, m.Graph.Initializers["w"].Data)
		require.NoError(t, m.Close())
	}
}
