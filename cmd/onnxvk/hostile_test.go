package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/example"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

var (
	hostileModels      = flag.Int("hostile.models", 0, "TestHostileSweep: `N` models of hostile sizes (default 200 in the long suites, else 8)")
	hostileCorruptions = flag.Int("hostile.corruptions", 0, "TestHostileSweep: `N` single-byte corruptions of real models (default 200 in the long suites, else 8)")
	hostileSeed        = flag.Uint64("hostile.seed", 1, "TestHostileSweep: `SEED` of the cases")
	hostileKeep        = flag.String("hostile.keep", "", "TestHostileSweep: copy the models of bad outcomes into `DIR`")
)

// The limits of one sweep case: the address space prlimit gives the
// process, and the time after which it counts as hung.
const (
	hostileAddressSpace = 8 << 30
	hostileTimeout      = 3 * time.Minute
)

// cliEnv, set to 1, makes the test binary the onnxvk command: the sweep
// runs it so when ONNXVK_HOSTILE_BIN names no built binary.
const cliEnv = "ONNXVK_TEST_BINARY_IS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// hostileCase is one model of the sweep and how to run it.
type hostileCase struct {
	name string
	// model is the file onnxvk runs; args follow "run MODEL".
	model string
	args  []string
	// write, when set, writes the model file before the run (which
	// removes it after): a corrupted copy of a large model.
	write func(path string) error
}

// outcome is how an onnxvk process ended.
type outcome string

const (
	outcomeOK     outcome = "ok"
	outcomeError  outcome = "clean error"
	outcomePanic  outcome = "panic"
	outcomeSignal outcome = "signal"
	outcomeFatal  outcome = "fatal error"
	outcomeHang   outcome = "hang"
)

var outcomes = []outcome{outcomeOK, outcomeError, outcomePanic, outcomeSignal, outcomeFatal, outcomeHang}

// TestHostileSweep runs models of hostile sizes (shapes and attributes
// near the int64 limits, huge ConstantOfShape, Expand, OneHot, Resize,
// Pad, Range and Tile sizes, deep nesting, bad external data) and
// single-byte corruptions of real models (resnet18, squeezenet and the
// transformer exported from PyTorch, resnet18 as an archive, the example)
// through `onnxvk run` under `prlimit --as=8G` and a timeout, and counts
// how each process ended: ok, a clean error, a panic, a signal, a Go
// fatal error (out of memory) or a hang. Any of the last four fails.
//
// Outside the long suites it runs 8 of each on the example, the long
// suites 200 of each. The full sweep (docs/HOSTILE.md), on a built binary:
//
//	go build -o /tmp/onnxvk ./cmd/onnxvk
//	ONNXVK_LONG=1 ONNXVK_HOSTILE_BIN=/tmp/onnxvk go test -count=1 -timeout 2h \
//		-run TestHostileSweep -v ./cmd/onnxvk -hostile.corruptions 1000
func TestHostileSweep(t *testing.T) {
	prlimit, bin, env := hostileCLI(t)
	nModels, nCorrupt := 8, 8
	if testenv.Long() {
		nModels, nCorrupt = 200, 200
	}
	if *hostileModels > 0 {
		nModels = *hostileModels
	}
	if *hostileCorruptions > 0 {
		nCorrupt = *hostileCorruptions
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(*hostileSeed, 13))
	cases := hostileModelCases(t, rng, dir, nModels)
	cases = append(cases, corruptionCases(t, rng, dir, realModels(t, dir), nCorrupt)...)

	type result struct {
		c      hostileCase
		out    outcome
		stderr string
		took   time.Duration
	}
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(2, runtime.GOMAXPROCS(0)/2) {
		wg.Go(func() {
			for i := range next {
				c := cases[i]
				if c.write != nil {
					if err := c.write(c.model); err != nil {
						t.Error(err)
						continue
					}
				}
				start := time.Now()
				out, stderr := runHostile(prlimit, bin, env, c)
				results[i] = result{c, out, stderr, time.Since(start)}
				if out != outcomeOK && out != outcomeError && *hostileKeep != "" {
					keep(t, c)
				}
				if c.write != nil {
					os.Remove(c.model)
				}
			}
		})
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()

	counts := map[string]map[outcome]int{}
	var bad []result
	for _, r := range results {
		kind, _, _ := strings.Cut(r.c.name, "/")
		if counts[kind] == nil {
			counts[kind] = map[outcome]int{}
		}
		counts[kind][r.out]++
		if r.out != outcomeOK && r.out != outcomeError {
			bad = append(bad, r)
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-22s", "cases")
	for _, o := range outcomes {
		fmt.Fprintf(&table, " %12s", o)
	}
	for _, kind := range slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&table, "\n%-22s", kind)
		for _, o := range outcomes {
			fmt.Fprintf(&table, " %12d", counts[kind][o])
		}
	}
	t.Logf("%d cases through %s under prlimit --as=%d, timeout %v:\n%s", len(cases), bin, hostileAddressSpace, hostileTimeout, table.String())
	for _, r := range bad {
		stderr := r.stderr
		if len(stderr) > 3000 {
			stderr = stderr[:3000] + "..."
		}
		t.Errorf("%s: %s after %v (run %s %s)\n%s", r.c.name, r.out, r.took.Round(time.Millisecond), r.c.model, strings.Join(r.c.args, " "), stderr)
	}
}

// keep copies the model of c into the -hostile.keep folder.
func keep(t *testing.T, c hostileCase) {
	b, err := os.ReadFile(c.model)
	if err == nil {
		err = os.MkdirAll(*hostileKeep, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(*hostileKeep, strings.NewReplacer("/", "_", " ", "_").Replace(c.name)+".onnx"), b, 0o644)
	}
	if err != nil {
		t.Errorf("keeping %s: %v", c.name, err)
	}
}

// hostileCLI returns the prlimit command and the onnxvk binary to run
// under it, with the environment it needs: ONNXVK_HOSTILE_BIN, or else
// the test binary as the command.
func hostileCLI(t *testing.T) (prlimit, bin string, env []string) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		testenv.Skip(t, "prlimit (util-linux) is not installed")
	}
	if bin = os.Getenv("ONNXVK_HOSTILE_BIN"); bin != "" {
		return prlimit, bin, nil
	}
	if raceEnabled {
		testenv.SkipShort(t, "the race detector's test binary cannot run under prlimit --as (its shadow memory)")
		testenv.Skip(t, "under the race detector, set ONNXVK_HOSTILE_BIN to an onnxvk binary built without it")
	}
	return prlimit, os.Args[0], []string{cliEnv + "=1"}
}

// TestHostMemoryFollowsAddressSpaceLimit runs a Loop that doubles a
// tensor 2^62 times under prlimit --as=2G: the default host memory limit
// is three quarters of what the address space limit leaves, under 1.5
// GiB, and Go's soft memory limit follows it, so the Run fails with a
// clean error instead of the process dying of out of memory (the
// default, three quarters of the machine's memory, ignored the limit;
// found by the hostile sweep). Which refusal comes first depends on the
// load: on a busy machine more threads and garbage take the address
// space, and a block over half of what is left is refused before the
// host memory limit is reached (the process died there before).
func TestHostMemoryFollowsAddressSpaceLimit(t *testing.T) {
	prlimit, bin, env := hostileCLI(t)
	m, _ := hostileLoopOf(1 << 62)
	data, err := loader.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "loop.onnx")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	cmd := exec.Command(prlimit, "--as="+strconv.Itoa(2<<30), "--", bin, "run", path, "--device", "cpu")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, 1, exit.ExitCode(), "%s", out)
	_, after, found := strings.Cut(string(out), "over the host memory limit of ")
	if !found {
		require.Contains(t, string(out), "the address space limit leaves: out of memory")
		return
	}
	var limit int64
	_, err = fmt.Sscanf(after, "%d bytes", &limit)
	require.NoError(t, err, "%s", out)
	require.Less(t, limit, int64(3<<29), "%s", out)
}

// runHostile runs c through the onnxvk binary bin under prlimit and
// classifies how it ended.
func runHostile(prlimit, bin string, env []string, c hostileCase) (outcome, string) {
	ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
	defer cancel()
	args := append([]string{"--as=" + strconv.Itoa(hostileAddressSpace), "--", bin, "run", c.model}, c.args...)
	cmd := exec.CommandContext(ctx, prlimit, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	msg := stderr.String()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return outcomeHang, msg
	case err == nil:
		return outcomeOK, msg
	case !errors.As(err, &exit):
		return outcomeSignal, err.Error()
	case strings.Contains(msg, "fatal error:"):
		return outcomeFatal, msg
	case strings.Contains(msg, "panic:") || strings.Contains(msg, "\ngoroutine "):
		return outcomePanic, msg
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return outcomeSignal, ws.Signal().String() + "\n" + msg
	}
	return outcomeError, msg
}

// hostileInts are the sizes and attribute values hostile models draw
// from: near the int64 and int32 limits, past any memory, negative.
var hostileInts = []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, 1 << 62, 1 << 63 / 3, 1 << 40, 1 << 33, 1 << 32,
	1<<32 - 1, 1 << 31, 1<<31 - 1, 1 << 20, 3_000_000_000, -1, -2, -(1 << 40), 0}

// hostileFloats are the scales and values they draw from.
var hostileFloats = []float64{1e10, 1e30, math.MaxFloat32, math.Inf(1), math.Inf(-1), math.NaN(), -1, 0, 1e-30, 65536}

// hostileModelCases writes n models of hostile sizes into dir.
func hostileModelCases(t *testing.T, rng *rand.Rand, dir string, n int) []hostileCase {
	makers := []struct {
		name string
		make func(rng *rand.Rand, dir, base string) (*graph.Model, []string)
	}{
		{"ConstantOfShape", hostileConstantOfShape},
		{"Expand", hostileExpand},
		{"OneHot", hostileOneHot},
		{"Resize", hostileResize},
		{"Pad", hostilePad},
		{"Range", hostileRange},
		{"Tile", hostileTile},
		{"Reshape", hostileReshape},
		{"Conv", hostileConv},
		{"ConvTranspose", hostileConvTranspose},
		{"HammingWindow", hostileWindow},
		{"declared-shape", hostileDeclared},
		{"sparse-Constant", hostileSparse},
		{"Loop", hostileLoop},
		{"nested-If", hostileNested},
		{"Slice", hostileSlice},
	}
	var cases []hostileCase
	for i := range n {
		base := filepath.Join(dir, fmt.Sprintf("hostile%03d", i))
		var name string
		var m *graph.Model
		var args []string
		var data []byte
		if i%8 == 7 {
			// Every eighth model has bad external data.
			name = "external-data"
			data = hostileExternal(t, rng, base)
		} else {
			mk := makers[rng.IntN(len(makers))]
			name = mk.name
			m, args = mk.make(rng, dir, base)
			var err error
			if data, err = loader.Marshal(m); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		path := base + ".onnx"
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(4) == 0 {
			args = append(args, "--device", "auto")
		} else {
			args = append(args, "--device", "cpu")
		}
		cases = append(cases, hostileCase{name: "hostile " + name + "/" + filepath.Base(path), model: path, args: args})
	}
	return cases
}

func hostileInt(rng *rand.Rand) int64 { return hostileInts[rng.IntN(len(hostileInts))] }

// smallOrHostile draws a small valid size or a hostile one.
func smallOrHostile(rng *rand.Rand) int64 {
	if rng.IntN(3) == 0 {
		return int64(1 + rng.IntN(4))
	}
	return hostileInt(rng)
}

func hostileFloat(rng *rand.Rand) float64 { return hostileFloats[rng.IntN(len(hostileFloats))] }

func int64Tensor(v ...int64) *graph.Tensor {
	t := graph.NewTensor(graph.Int64, []int64{int64(len(v))})
	copy(graph.View[int64](t), v)
	return t
}

func floatTensor(shape []int64, v ...float32) *graph.Tensor {
	t := graph.NewTensor(graph.Float, shape)
	copy(graph.View[float32](t), v)
	return t
}

// oneNode makes a model of one node whose inputs are an input x (when
// xShape is not nil) and initializers, and whose outputs are graph
// outputs.
func oneNode(opset int64, op string, xShape []int64, inits []*graph.Tensor, attrs map[string]*graph.Attribute, nOut int) *graph.Model {
	gr := graph.NewGraph("hostile")
	n := &graph.Node{Name: "n", OpType: op, Attrs: attrs}
	if n.Attrs == nil {
		n.Attrs = map[string]*graph.Attribute{}
	}
	if xShape != nil {
		gr.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(xShape...))}}
		n.Inputs = append(n.Inputs, "x")
	}
	for i, t := range inits {
		if t == nil {
			n.Inputs = append(n.Inputs, "")
			continue
		}
		name := fmt.Sprintf("c%d", i)
		gr.Initializers[name] = t
		n.Inputs = append(n.Inputs, name)
	}
	for i := range nOut {
		out := fmt.Sprintf("y%d", i)
		n.Outputs = append(n.Outputs, out)
		gr.Outputs = append(gr.Outputs, &graph.ValueInfo{Name: out})
	}
	gr.Nodes = []*graph.Node{n}
	ir := int64(8)
	if opset >= 19 {
		ir = 10
	}
	return &graph.Model{Name: "hostile", IRVersion: ir, Opsets: map[string]int64{"": opset}, Graph: gr}
}

func intAttr(name string, v int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
}

func intsAttr(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}

func hostileShape(rng *rand.Rand) []int64 {
	shape := make([]int64, 1+rng.IntN(4))
	for i := range shape {
		shape[i] = smallOrHostile(rng)
	}
	return shape
}

func hostileConstantOfShape(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	return oneNode(18, "ConstantOfShape", nil, []*graph.Tensor{int64Tensor(hostileShape(rng)...)}, nil, 1), nil
}

func hostileExpand(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	return oneNode(18, "Expand", []int64{1, 2}, []*graph.Tensor{int64Tensor(hostileShape(rng)...)}, nil, 1), nil
}

func hostileOneHot(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	idx := int64Tensor(0, 1, 2)
	return oneNode(11, "OneHot", nil, []*graph.Tensor{idx, int64Tensor(hostileInt(rng)), floatTensor([]int64{2}, 0, 1)},
		map[string]*graph.Attribute{"axis": intAttr("axis", smallOrHostile(rng))}, 1), nil
}

func hostileResize(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	if rng.IntN(2) == 0 {
		scales := floatTensor([]int64{4}, 1, 1, float32(hostileFloat(rng)), float32(hostileFloat(rng)))
		return oneNode(18, "Resize", []int64{1, 1, 2, 2}, []*graph.Tensor{nil, scales}, nil, 1), nil
	}
	sizes := int64Tensor(1, 1, smallOrHostile(rng), smallOrHostile(rng))
	return oneNode(18, "Resize", []int64{1, 1, 2, 2}, []*graph.Tensor{nil, nil, sizes}, nil, 1), nil
}

func hostilePad(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	pads := int64Tensor(smallOrHostile(rng), smallOrHostile(rng), smallOrHostile(rng), smallOrHostile(rng))
	mode := []string{"constant", "reflect", "edge", "wrap"}[rng.IntN(4)]
	return oneNode(19, "Pad", []int64{2, 3}, []*graph.Tensor{pads},
		map[string]*graph.Attribute{"mode": {Name: "mode", Type: graph.AttrString, S: []byte(mode)}}, 1), nil
}

func hostileRange(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	if rng.IntN(2) == 0 {
		scalar := func(v int64) *graph.Tensor {
			t := graph.NewTensor(graph.Int64, nil)
			graph.View[int64](t)[0] = v
			return t
		}
		return oneNode(11, "Range", nil, []*graph.Tensor{scalar(hostileInt(rng)), scalar(hostileInt(rng)), scalar(smallOrHostile(rng))}, nil, 1), nil
	}
	scalar := func(v float64) *graph.Tensor { return floatTensor(nil, float32(v)) }
	return oneNode(11, "Range", nil, []*graph.Tensor{scalar(-hostileFloat(rng)), scalar(hostileFloat(rng)), scalar(hostileFloat(rng))}, nil, 1), nil
}

func hostileTile(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	return oneNode(13, "Tile", []int64{2, 3}, []*graph.Tensor{int64Tensor(smallOrHostile(rng), smallOrHostile(rng))}, nil, 1), nil
}

func hostileReshape(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	return oneNode(14, "Reshape", []int64{2, 3}, []*graph.Tensor{int64Tensor(hostileShape(rng)...)}, nil, 1), nil
}

func hostileConv(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	w := floatTensor([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	attrs := map[string]*graph.Attribute{}
	switch rng.IntN(4) {
	case 0:
		attrs["pads"] = intsAttr("pads", smallOrHostile(rng), smallOrHostile(rng), smallOrHostile(rng), smallOrHostile(rng))
	case 1:
		attrs["dilations"] = intsAttr("dilations", smallOrHostile(rng), smallOrHostile(rng))
	case 2:
		attrs["strides"] = intsAttr("strides", smallOrHostile(rng), smallOrHostile(rng))
	default:
		attrs["group"] = intAttr("group", hostileInt(rng))
	}
	return oneNode(11, "Conv", []int64{1, 1, 4, 4}, []*graph.Tensor{w}, attrs, 1), nil
}

func hostileConvTranspose(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	w := floatTensor([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	attrs := map[string]*graph.Attribute{}
	if rng.IntN(2) == 0 {
		attrs["output_shape"] = intsAttr("output_shape", smallOrHostile(rng), smallOrHostile(rng))
	} else {
		attrs["strides"] = intsAttr("strides", smallOrHostile(rng), smallOrHostile(rng))
		attrs["output_padding"] = intsAttr("output_padding", smallOrHostile(rng), smallOrHostile(rng))
	}
	return oneNode(11, "ConvTranspose", []int64{1, 1, 4, 4}, []*graph.Tensor{w}, attrs, 1), nil
}

func hostileWindow(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	op := []string{"HammingWindow", "HannWindow", "BlackmanWindow"}[rng.IntN(3)]
	size := graph.NewTensor(graph.Int64, nil)
	graph.View[int64](size)[0] = hostileInt(rng)
	return oneNode(17, op, nil, []*graph.Tensor{size}, nil, 1), nil
}

// hostileDeclared declares an input of hostile (or symbolic) dimensions;
// the random input onnxvk makes for it takes them, or --dim's size.
func hostileDeclared(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	m := oneNode(13, []string{"Relu", "Softmax", "Flatten", "Shape", "ReduceSum"}[rng.IntN(5)], []int64{1}, nil, nil, 1)
	var args []string
	dims := make(graph.Shape, 1+rng.IntN(3))
	for i := range dims {
		if rng.IntN(2) == 0 {
			dims[i] = graph.SymDim(fmt.Sprint("d", i))
			args = append(args, "--dim", fmt.Sprintf("d%d=%d", i, smallOrHostile(rng)))
		} else {
			dims[i] = graph.DimOf(smallOrHostile(rng))
		}
	}
	m.Graph.Inputs[0].Type = graph.TensorType(graph.Float, dims)
	return m, args
}

func hostileSparse(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	sp := &graph.SparseTensor{Values: floatTensor([]int64{2}, 1, 2), Indices: int64Tensor(0, smallOrHostile(rng)), Dims: hostileShape(rng)}
	return oneNode(13, "Constant", nil, nil, map[string]*graph.Attribute{"sparse_value": {Name: "sparse_value", Type: graph.AttrSparseTensor, Sparse: sp}}, 1), nil
}

// hostileLoop makes a Loop of a hostile trip count whose body doubles a
// carried tensor and emits it as a scan output at each iteration.
func hostileLoop(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	return hostileLoopOf(hostileInt(rng))
}

func hostileLoopOf(trips int64) (*graph.Model, []string) {
	body := graph.NewGraph("body")
	body.Inputs = []*graph.ValueInfo{
		{Name: "i", Type: graph.TensorType(graph.Int64, graph.ShapeOf())},
		{Name: "cond", Type: graph.TensorType(graph.Bool, graph.ShapeOf())},
		{Name: "v", Type: graph.TensorType(graph.Float, nil)},
	}
	body.Nodes = []*graph.Node{{Name: "grow", OpType: "Concat", Inputs: []string{"v", "v"}, Outputs: []string{"v2"},
		Attrs: map[string]*graph.Attribute{"axis": intAttr("axis", 0)}}}
	body.Outputs = []*graph.ValueInfo{{Name: "cond"}, {Name: "v2"}, {Name: "v"}}
	trip := graph.NewTensor(graph.Int64, nil)
	graph.View[int64](trip)[0] = trips
	cond := graph.NewTensor(graph.Bool, nil)
	cond.Data[0] = 1
	m := oneNode(13, "Loop", nil, []*graph.Tensor{trip, cond, floatTensor([]int64{1}, 1)},
		map[string]*graph.Attribute{"body": {Name: "body", Type: graph.AttrGraph, G: body}}, 2)
	body.Parent = m.Graph
	return m, nil
}

// hostileNested nests Ifs deeply: each then_branch holds the next If,
// each else_branch an Identity.
func hostileNested(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	depth := []int{100, 1000, 3000, 10000}[rng.IntN(4)]
	cond := graph.NewTensor(graph.Bool, nil)
	cond.Data[0] = 1
	leaf := func(name string) *graph.Graph {
		g := graph.NewGraph(name)
		g.Nodes = []*graph.Node{{Name: name + "n", OpType: "Identity", Inputs: []string{"c0"}, Outputs: []string{name + "o"}}}
		g.Outputs = []*graph.ValueInfo{{Name: name + "o"}}
		return g
	}
	branches := func(then *graph.Graph, d int) map[string]*graph.Attribute {
		return map[string]*graph.Attribute{
			"then_branch": {Name: "then_branch", Type: graph.AttrGraph, G: then},
			"else_branch": {Name: "else_branch", Type: graph.AttrGraph, G: leaf(fmt.Sprint("e", d))},
		}
	}
	inner := leaf("leaf")
	for d := range depth {
		g := graph.NewGraph(fmt.Sprint("g", d))
		out := fmt.Sprint("o", d)
		g.Nodes = []*graph.Node{{Name: fmt.Sprint("n", d), OpType: "If", Inputs: []string{"c0"}, Outputs: []string{out}, Attrs: branches(inner, d)}}
		g.Outputs = []*graph.ValueInfo{{Name: out}}
		inner = g
	}
	m := oneNode(13, "If", nil, []*graph.Tensor{cond}, branches(inner, depth), 1)
	for stack := []*graph.Graph{m.Graph}; len(stack) > 0; {
		gr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, n := range gr.Nodes {
			for _, sub := range graph.NodeSubgraphs(n) {
				sub.Parent = gr
				stack = append(stack, sub)
			}
		}
	}
	return m, nil
}

func hostileSlice(rng *rand.Rand, _, _ string) (*graph.Model, []string) {
	return oneNode(13, "Slice", []int64{4, 3}, []*graph.Tensor{int64Tensor(hostileInt(rng)), int64Tensor(hostileInt(rng)),
		int64Tensor(smallOrHostile(rng)), int64Tensor(smallOrHostile(rng))}, nil, 1), nil
}

// hostileExternal writes the weight file base.bin and returns a model
// whose weight lies in it at a bad place: offsets and lengths near the
// int64 limits or past the file's end, missing files, locations that
// leave the folder, a folder, a FIFO, a device.
func hostileExternal(t *testing.T, rng *rand.Rand, base string) []byte {
	weights := base + ".bin"
	if err := os.WriteFile(weights, make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	loc, offset, length := filepath.Base(weights), strconv.FormatInt(smallOrHostile(rng), 10), strconv.FormatInt(smallOrHostile(rng), 10)
	switch rng.IntN(6) {
	case 0:
		loc = "missing.bin"
	case 1:
		loc = "../" + filepath.Base(weights)
	case 2:
		loc = "."
	case 3:
		fifo := base + ".fifo"
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		loc = filepath.Base(fifo)
	case 4:
		zero := base + ".zero"
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		loc = filepath.Base(zero)
	}
	if rng.IntN(3) == 0 {
		offset = strconv.FormatInt(rng.Int64N(64), 10)
		length = "16"
	}
	dims := []int64{4}
	if rng.IntN(2) == 0 {
		dims = hostileShape(rng)
	}
	ext := onnxpb.TensorProto_EXTERNAL
	tp := &onnxpb.TensorProto{Name: proto.String("w"), DataType: proto.Int32(int32(graph.Float)), Dims: dims, DataLocation: &ext}
	for _, kv := range [][2]string{{"location", loc}, {"offset", offset}, {"length", length}} {
		tp.ExternalData = append(tp.ExternalData, &onnxpb.StringStringEntryProto{Key: proto.String(kv[0]), Value: proto.String(kv[1])})
	}
	mp := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}},
		Graph: &onnxpb.GraphProto{
			Name:        proto.String("g"),
			Initializer: []*onnxpb.TensorProto{tp},
			Node:        []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"w"}, Output: []string{"y"}}},
			Output:      []*onnxpb.ValueInfoProto{{Name: proto.String("y")}},
		},
	}
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// realModel is a model file to corrupt, with the byte ranges that hold
// tensor data (a corruption there changes a weight, not the structure).
type realModel struct {
	name, path string
	data       []byte
	weights    [][2]int
}

// realModels returns the models to corrupt: the example and, in the long
// suites, the PyTorch exports (resnet18 also as an archive).
func realModels(t *testing.T, dir string) []realModel {
	ex := filepath.Join(dir, "example.onnx")
	if err := os.WriteFile(ex, example.Model(), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{ex}
	if testenv.Long() {
		cache := torchmodels.Cache(t, filepath.Join("..", ".."))
		names := []string{"resnet18", "squeezenet1_1", "transformer"}
		torchmodels.Export(t, filepath.Join("..", ".."), cache, names)
		for _, name := range names {
			paths = append(paths, filepath.Join(cache, name, "model.onnx"))
		}
		m, err := loader.Load(paths[1])
		if err != nil {
			t.Fatal(err)
		}
		archive := filepath.Join(dir, "resnet18-archive.onnx")
		err = loader.SaveArchive(m, archive)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, archive)
	}
	var models []realModel
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(filepath.Dir(p))
		if p == ex || strings.HasSuffix(p, "-archive.onnx") {
			name = strings.TrimSuffix(filepath.Base(p), ".onnx")
		}
		rm := realModel{name: name, path: p, data: data}
		if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
			rm.weights = archiveDataRanges(t, data)
		} else {
			rm.weights = rawDataRanges(data)
		}
		models = append(models, rm)
	}
	return models
}

// rawDataRanges finds the raw_data of the initializers of a serialized
// ModelProto's main graph.
func rawDataRanges(b []byte) [][2]int {
	var out [][2]int
	fields(b, 0, func(num protowire.Number, start int, v []byte) {
		if num != 7 { // ModelProto.graph
			return
		}
		fields(v, start, func(num protowire.Number, start int, v []byte) {
			if num != 5 { // GraphProto.initializer
				return
			}
			fields(v, start, func(num protowire.Number, start int, v []byte) {
				if num == 9 { // TensorProto.raw_data
					out = append(out, [2]int{start, start + len(v)})
				}
			})
		})
	})
	return out
}

// fields calls f with each length-delimited field of the message b, which
// starts at offset base of the file, and the file offset of its bytes.
func fields(b []byte, base int, f func(num protowire.Number, start int, v []byte)) {
	for pos := 0; pos < len(b); {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return
		}
		pos += n
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b[pos:])
			if m < 0 {
				return
			}
			f(num, base+pos+m-len(v), v)
			pos += m
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b[pos:])
		if m < 0 {
			return
		}
		pos += m
	}
}

// archiveDataRanges finds the bodies of an archive's data entries.
func archiveDataRanges(t *testing.T, b []byte) [][2]int {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]int
	for _, f := range zr.File {
		if f.Name == loader.ArchiveModelEntry {
			continue
		}
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]int{int(off), int(off) + int(f.CompressedSize64)})
	}
	return out
}

// corruptionCases writes n copies of the real models, each with one byte
// changed: mostly a byte of the structure (outside tensor data), else
// any byte.
func corruptionCases(t *testing.T, rng *rand.Rand, dir string, models []realModel, n int) []hostileCase {
	var cases []hostileCase
	for i := range n {
		rm := models[i%len(models)]
		pos := rng.IntN(len(rm.data))
		if rng.IntN(8) != 0 {
			for inRanges(rm.weights, pos) {
				pos = rng.IntN(len(rm.data))
			}
		}
		old := rm.data[pos]
		var b byte
		switch rng.IntN(4) {
		case 0:
			b = old ^ 1<<rng.IntN(8)
		case 1:
			b = []byte{0, 0xff, 0x7f, 0x80}[rng.IntN(4)]
		default:
			b = byte(rng.IntN(256))
		}
		if b == old {
			b = ^old
		}
		write := func(path string) error {
			f, err := os.Create(path)
			if err == nil {
				_, err = f.Write(rm.data[:pos])
			}
			if err == nil {
				_, err = f.Write([]byte{b})
			}
			if err == nil {
				_, err = f.Write(rm.data[pos+1:])
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		args := []string{"--device", "cpu"}
		if i%5 == 4 {
			args[1] = "auto"
		}
		cases = append(cases, hostileCase{name: fmt.Sprintf("corrupt %s/byte %d %#02x->%#02x", rm.name, pos, old, b),
			model: filepath.Join(dir, fmt.Sprintf("%s-%04d.onnx", rm.name, i)), args: args, write: write})
	}
	return cases
}

func inRanges(ranges [][2]int, pos int) bool {
	for _, r := range ranges {
		if pos >= r[0] && pos < r[1] {
			return true
		}
	}
	return false
}
