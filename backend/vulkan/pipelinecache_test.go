package vulkan

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// residualNet is a small residual network over an input [1, 3, 16, 16]:
// Conv + Relu, Conv + residual Add + Relu, MaxPool, GlobalAveragePool,
// Flatten, Gemm and Softmax, with seeded random weights; feeds holds its
// input.
func residualNet() (m *graph.Model, feeds map[string]graph.Value) {
	r := rand.New(rand.NewPCG(5, 6))
	random := func(shape ...int64) *graph.Tensor { return kerneltest.RandFloats(r, shape, -0.5, 0.5) }
	g := graph.NewGraph("residual")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 3, 16, 16))}}
	g.Initializers = map[string]*graph.Tensor{"w1": random(8, 3, 3, 3), "b1": random(8), "w2": random(8, 8, 3, 3), "b2": random(8),
		"fw": random(10, 8), "fb": random(10)}
	pads := map[string]*graph.Attribute{"pads": kerneltest.IntsAttr("pads", 1, 1, 1, 1)}
	g.Nodes = []*graph.Node{
		{Index: 0, OpType: "Conv", Inputs: []string{"x", "w1", "b1"}, Outputs: []string{"c1"}, Attrs: pads},
		{Index: 1, OpType: "Relu", Inputs: []string{"c1"}, Outputs: []string{"r1"}},
		{Index: 2, OpType: "Conv", Inputs: []string{"r1", "w2", "b2"}, Outputs: []string{"c2"}, Attrs: pads},
		{Index: 3, OpType: "Add", Inputs: []string{"c2", "r1"}, Outputs: []string{"a"}},
		{Index: 4, OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"r2"}},
		{Index: 5, OpType: "MaxPool", Inputs: []string{"r2"}, Outputs: []string{"m"},
			Attrs: map[string]*graph.Attribute{"kernel_shape": kerneltest.IntsAttr("kernel_shape", 2, 2), "strides": kerneltest.IntsAttr("strides", 2, 2)}},
		{Index: 6, OpType: "GlobalAveragePool", Inputs: []string{"m"}, Outputs: []string{"p"}},
		{Index: 7, OpType: "Flatten", Inputs: []string{"p"}, Outputs: []string{"f"}},
		{Index: 8, OpType: "Gemm", Inputs: []string{"f", "fw", "fb"}, Outputs: []string{"l"}, Attrs: map[string]*graph.Attribute{"transB": kerneltest.IntAttr("transB", 1)}},
		{Index: 9, OpType: "Softmax", Inputs: []string{"l"}, Outputs: []string{"y"}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "residual", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g},
		map[string]graph.Value{"x": random(1, 3, 16, 16)}
}

// tinyNet is a 1×1 Conv + Relu over an input [1, 2, 2, 2] (one fused
// dispatch); feeds holds its input.
func tinyNet() (m *graph.Model, feeds map[string]graph.Value) {
	r := rand.New(rand.NewPCG(1, 1))
	g := graph.NewGraph("tiny")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 2, 2))}}
	g.Initializers = map[string]*graph.Tensor{"w": kerneltest.RandFloats(r, []int64{2, 2, 1, 1}, -1, 1)}
	g.Nodes = []*graph.Node{{Index: 0, OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"c"}},
		{Index: 1, OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"y"}}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "tiny", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g},
		map[string]graph.Value{"x": kerneltest.RandFloats(r, []int64{1, 2, 2, 2}, -1, 1)}
}

// runCached opens the default device with the pipeline cache folder
// dir, runs the model that net returns on it and closes it; it returns
// the closed device and the output.
func runCached(t *testing.T, dir string, net func() (*graph.Model, map[string]graph.Value)) (*Device, *graph.Tensor) {
	t.Helper()
	t.Setenv(PipelineCacheEnv, dir)
	d := openTest(t)
	if d.cache.handle == 0 {
		t.Fatal("the device has no pipeline cache")
	}
	m, feeds := net()
	y := runConvModel(t, m, feeds, true, d)
	skipHeaderless(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return d, y
}

// skipHeaderless skips a test of saved cache files on a driver whose
// pipeline cache data does not start with the Vulkan header, which onnxvk
// never saves (Mesa 26's lavapipe gives 20 bytes, fewer than the header's
// 32), closing d.
func skipHeaderless(t *testing.T, d *Device) {
	t.Helper()
	d.mu.Lock()
	data, err := vk.GetPipelineCacheData(d.dev, d.cache.handle)
	d.mu.Unlock()
	if err == nil && !validCacheData(data, d.cache.header) {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
		testenv.SkipDeclined(t, fmt.Sprintf("%s gives pipeline cache data without the Vulkan header (%d bytes), which is never saved", d.info.DriverInfo, len(data)))
	}
}

// TestPipelineCacheSavedAndLoaded checks that Close saves the pipeline
// cache into the folder PipelineCacheEnv names, with the header of the
// device, and that the next device loads it, computes the same results
// and writes the file again only when the driver's data changed (Mesa
// 22.3's lavapipe gives the header alone: it never does).
func TestPipelineCacheSavedAndLoaded(t *testing.T) {
	dir := t.TempDir()
	cold, want := runCached(t, dir, residualNet)
	if cold.cache.loaded != 0 {
		t.Fatalf("a cache of %d bytes was loaded from an empty folder", cold.cache.loaded)
	}
	if filepath.Dir(cold.cache.path) != dir {
		t.Fatalf("the cache file is %s, want one in %s", cold.cache.path, dir)
	}
	saved, err := os.ReadFile(cold.cache.path)
	if err != nil {
		t.Fatal(err)
	}
	if !validCacheData(saved, cold.cache.header) {
		t.Fatalf("the saved cache (%d bytes) does not start with the device's header: % x", len(saved), saved[:min(len(saved), 32)])
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("%d files in the cache folder, want the cache file alone", len(entries))
	}
	before, err := os.Stat(cold.cache.path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := before.Mode().Perm(); runtime.GOOS != "windows" && perm != 0o644 {
		t.Errorf("the cache file has mode %v, want 0644", perm)
	}

	warm := openTest(t)
	if warm.cache.loaded != len(saved) || warm.cache.loadedSum != sha256.Sum256(saved) {
		t.Fatalf("the device loaded %d bytes, not the %d-byte cache file", warm.cache.loaded, len(saved))
	}
	m, feeds := residualNet()
	got := runConvModel(t, m, feeds, true, warm)
	data, err := vk.GetPipelineCacheData(warm.dev, warm.cache.handle)
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Close(); err != nil {
		t.Fatal(err)
	}
	kerneltest.CompareFloats(t, "with the loaded cache", got, want, ops.Lookup(ops.FusedDomain, "FusedConv", 1).Tolerance())
	after, err := os.Stat(cold.cache.path)
	if err != nil {
		t.Fatal(err)
	}
	switch unchanged, same := bytes.Equal(data, saved), os.SameFile(before, after); {
	case unchanged && !same:
		t.Error("Close wrote the cache file again though the driver's data had not changed")
	case !unchanged && same:
		t.Error("Close did not save the pipelines the driver added to the cache")
	}
}

// TestPipelineCacheOff checks that PipelineCacheEnv=off keeps the cache in
// memory and writes nothing into the user's cache folder, and that
// without the variable the cache file goes there. (The driver may keep
// caches of its own in the user's cache folder.)
func TestPipelineCacheOff(t *testing.T) {
	home := t.TempDir()
	for _, v := range []string{"XDG_CACHE_HOME", "HOME", "LocalAppData"} {
		t.Setenv(v, home)
	}
	base, err := os.UserCacheDir()
	if err != nil || !strings.HasPrefix(base, home) {
		testenv.Skip(t, fmt.Sprintf("the user cache folder (%s, %v) is not under the test's home", base, err))
	}
	off, _ := runCached(t, "off", tinyNet)
	if off.cache.path != "" {
		t.Errorf("off: the cache file is %s", off.cache.path)
	}
	if _, err := os.Stat(filepath.Join(base, "onnxvk")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("off: %s/onnxvk exists (%v)", base, err)
	}
	d, _ := runCached(t, "", tinyNet)
	if want := filepath.Join(base, "onnxvk", "pipelines"); filepath.Dir(d.cache.path) != want {
		t.Errorf("the cache file is %s, want one in %s", d.cache.path, want)
	}
	if _, err := os.Stat(d.cache.path); err != nil {
		t.Error(err)
	}
}

// TestPipelineCacheReplacesBadFiles checks that a cache file of another
// device or of random bytes is not loaded, and that Close replaces it.
func TestPipelineCacheReplacesBadFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(PipelineCacheEnv, dir)
	probe := openTest(t)
	path, header := probe.cache.path, probe.cache.header
	if err := probe.Close(); err != nil {
		t.Fatal(err)
	}
	foreign := header
	foreign.PipelineCacheUUID[0] ^= 1
	r := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	for name, data := range map[string][]byte{"foreign": append(cacheFile(foreign), noise...), "noise": noise} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, _ := runCached(t, dir, tinyNet)
		if d.cache.loaded != 0 {
			t.Errorf("%s: the device loaded the file", name)
		}
		saved, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !validCacheData(saved, header) {
			t.Errorf("%s: Close did not replace the file", name)
		}
	}
}

// TestPipelineCacheSaveFails checks that a cache that cannot be saved (its
// folder is a file) is no error of Close.
func TestPipelineCacheSaveFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(PipelineCacheEnv, file)
	d := openTest(t)
	m, feeds := tinyNet()
	runConvModel(t, m, feeds, true, d)
	skipHeaderless(t, d)
	d.mu.Lock()
	err := d.cache.save(d.dev)
	d.mu.Unlock()
	if err == nil {
		t.Error("the cache was saved under a file")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// cacheFile returns the bytes of a cache file that holds header h alone.
func cacheFile(h vk.PipelineCacheHeaderVersionOne) []byte {
	b, err := binary.Append(nil, binary.LittleEndian, &h)
	if err != nil {
		panic(err)
	}
	return b
}

// TestReadCacheFile checks which files readCacheFile takes: those that
// start with the device's header and are not too large.
func TestReadCacheFile(t *testing.T) {
	want := vk.PipelineCacheHeaderVersionOne{HeaderSize: 32, HeaderVersion: vk.HeaderVersionOne, VendorID: 0x10de, DeviceID: 0x2335,
		PipelineCacheUUID: [16]uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
	good := append(cacheFile(want), "entries"...)
	edit := func(f func(h *vk.PipelineCacheHeaderVersionOne)) []byte {
		h := want
		f(&h)
		return append(cacheFile(h), "entries"...)
	}
	dir := t.TempDir()
	cases := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"good", good, true},
		{"header alone", cacheFile(want), true},
		{"empty", nil, false},
		{"truncated header", good[:20], false},
		{"random", []byte(strings.Repeat("\x9c\x01\xff", 100)), false},
		{"header size", edit(func(h *vk.PipelineCacheHeaderVersionOne) { h.HeaderSize = 48 }), false},
		{"header version", edit(func(h *vk.PipelineCacheHeaderVersionOne) { h.HeaderVersion = 2 }), false},
		{"vendor", edit(func(h *vk.PipelineCacheHeaderVersionOne) { h.VendorID = 0x1002 }), false},
		{"device", edit(func(h *vk.PipelineCacheHeaderVersionOne) { h.DeviceID++ }), false},
		{"uuid", edit(func(h *vk.PipelineCacheHeaderVersionOne) { h.PipelineCacheUUID[15] = 0 }), false},
		{"big-endian", func() []byte { b, _ := binary.Append(nil, binary.BigEndian, &want); return b }(), false},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readCacheFile(path, want); (got != nil) != c.ok || c.ok && !bytes.Equal(got, c.data) {
			t.Errorf("%s: read %d bytes, want %v", c.name, len(got), c.ok)
		}
	}
	if readCacheFile(filepath.Join(dir, "missing"), want) != nil {
		t.Error("a missing file was read")
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxPipelineCacheBytes+1); err != nil {
		t.Fatal(err)
	}
	if readCacheFile(huge, want) != nil {
		t.Error("a file over the size limit was read")
	}
}
