package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// stageDevice is a logical device that runs Relu and logs which request
// (the first element of its input, negated) each Run of each of its
// programs works on, and how many Runs of a program overlap.
type stageDevice struct {
	name string
	mu   sync.Mutex
	// order lists the requests each program ran, by program.
	order   [][]int
	maxBusy atomic.Int32
	// step, when set, is called with each Relu's input before the Relu
	// runs; an error fails the Run. Set it while no Run is in flight.
	step func(in []float32) error
}

// meetTimeout bounds how long meet waits for the other step: far beyond
// what starting a goroutine takes on a loaded machine.
const meetTimeout = 10 * time.Second

// meet closes mine and waits for other to be closed: two steps that can
// only both return while both run at once. It fails, after meetTimeout,
// when the other never starts.
func meet(mine, other chan struct{}, what string) error {
	close(mine)
	select {
	case <-other:
		return nil
	case <-time.After(meetTimeout):
		return fmt.Errorf("%s: waited %v for the step that should run at the same time", what, meetTimeout)
	}
}

func (d *stageDevice) Name() string                { return d.name }
func (*stageDevice) Supports(q planner.Query) bool { return q.Node.OpType == "Relu" }
func (*stageDevice) Close() error                  { return nil }
func (*stageDevice) Upload(v graph.Value) (graph.Value, error) {
	return deviceTensor{v.(*graph.Tensor)}, nil
}
func (*stageDevice) Download(v graph.Value) (graph.Value, error) {
	return v.(deviceTensor).Tensor, nil
}

func (d *stageDevice) Compile(p *planner.Plan, steps []planner.Step) (backend.Program, error) {
	d.mu.Lock()
	prog := len(d.order)
	d.order = append(d.order, nil)
	d.mu.Unlock()
	var busy atomic.Int32
	return programFunc(func(ctx context.Context, f *backend.Frame) error {
		n := busy.Add(1)
		defer busy.Add(-1)
		for old := d.maxBusy.Load(); n > old && !d.maxBusy.CompareAndSwap(old, n); old = d.maxBusy.Load() {
		}
		tr := backend.TraceFrom(ctx)
		var t0 time.Duration
		if tr != nil {
			t0 = tr.Now()
		}
		vals := f.Values[d.name]
		for _, st := range steps {
			in := vals[st.In[0]].(deviceTensor)
			d.mu.Lock()
			d.order[prog] = append(d.order[prog], int(-graph.View[float32](in.Tensor)[0]))
			d.mu.Unlock()
			if d.step != nil {
				if err := d.step(graph.View[float32](in.Tensor)); err != nil {
					return err
				}
			}
			out := graph.NewTensor(graph.Float, in.Shape)
			for i, x := range graph.View[float32](in.Tensor) {
				graph.View[float32](out)[i] = max(x, 0)
			}
			vals[st.Out[0]] = deviceTensor{out}
			if tr != nil {
				tr.Add(backend.TraceEvent{Name: st.Node.Name, Op: st.Node.OpType, Device: d.name, Start: t0, Dur: tr.Now() - t0})
			}
		}
		return nil
	}), nil
}

// watchedCPU is the CPU device, calling started with the steps of each of
// its programs as a Run of it begins; an error fails the Run.
type watchedCPU struct {
	backend.Device
	started func(steps []planner.Step) error
}

func (c watchedCPU) Compile(p *planner.Plan, steps []planner.Step) (backend.Program, error) {
	prog, err := c.Device.Compile(p, steps)
	if err != nil {
		return nil, err
	}
	return programFunc(func(ctx context.Context, f *backend.Frame) error {
		if err := c.started(steps); err != nil {
			return err
		}
		return prog.Run(ctx, f)
	}), nil
}

// onStageDevices plans g as a model of IR 11 configuration config over two
// logical devices, stageDevices d0 and d1, with the CPU as the fallback
// (watched by started, when not nil), and compiles the plan.
func onStageDevices(t *testing.T, g *graph.Graph, config string, started func([]planner.Step) error) (*planner.Plan, *backend.Executor, *stageDevice, *stageDevice) {
	t.Helper()
	m := &graph.Model{Name: g.Name, IRVersion: 11, Opsets: map[string]int64{"": 17}, Graph: g,
		Configurations: []graph.DeviceConfiguration{{Name: config, NumDevices: 2}}}
	d0, d1 := &stageDevice{name: "d0"}, &stageDevice{name: "d1"}
	var cpu backend.Device = hostfallback.NewDevice(nil)
	if started != nil {
		cpu = watchedCPU{cpu, started}
	}
	st := &planner.Stages{Configuration: config, Devices: []planner.Device{d0, d1}, Physical: []string{"fake", "fake"}}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d0, d1, cpu}, Stages: st})
	require.NoError(t, err)
	ex, err := backend.NewExecutor(p, []backend.Device{d0, d1, cpu})
	require.NoError(t, err)
	return p, ex, d0, d1
}

// TestRunBatchPipelines runs Relu, Neg, Relu with the first Relu on
// logical device d0 and the rest on d1 (the Neg falls back to the CPU)
// over 8 requests: every request gets its own result, each segment works
// on one request at a time, in order, the trace labels every event with
// its request and logical device, and the stages overlap: d1's Relu of
// request i and d0's of request i+1 meet (each waits for the other to
// start), which they can only do if both run at once.
func TestRunBatchPipelines(t *testing.T) {
	g := graph.NewGraph("stages")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	stage := func(k int32) []graph.NodeDeviceConfiguration {
		return []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", PipelineStage: k, HasStage: true}}
	}
	g.Nodes = []*graph.Node{
		{Name: "r0", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"a"}, DeviceConfigs: stage(0)},
		{Name: "neg", OpType: "Neg", Inputs: []string{"a"}, Outputs: []string{"b"}, Index: 1, DeviceConfigs: stage(1)},
		{Name: "r1", OpType: "Relu", Inputs: []string{"b"}, Outputs: []string{"y"}, Index: 2, DeviceConfigs: stage(1)},
	}
	_, ex, d0, d1 := onStageDevices(t, g, "pp", nil)

	const n = 8
	entered := [2][n]chan struct{}{}
	for i := range n {
		entered[0][i], entered[1][i] = make(chan struct{}), make(chan struct{})
	}
	// d0 reads x = [-i, i+1] and d1 -relu(x) = [0, -(i+1)].
	d0.step = func(in []float32) error {
		i := int(-in[0])
		if i == 0 {
			close(entered[0][i])
			return nil
		}
		return meet(entered[0][i], entered[1][i-1], fmt.Sprintf("d0, request %d", i))
	}
	d1.step = func(in []float32) error {
		i := int(-in[1]) - 1
		if i == n-1 {
			close(entered[1][i])
			return nil
		}
		return meet(entered[1][i], entered[0][i+1], fmt.Sprintf("d1, request %d", i))
	}
	inputs := make([]map[string]graph.Value, n)
	for i := range inputs {
		// x = [-i, i+1]: y = relu(-relu(x)) = 0, and d1 sees -relu(x)[0] = 0;
		// d0 reads the request from x[0].
		x, _ := graph.FromSlice(graph.Float, []int64{2}, []float32{-float32(i), float32(i + 1)})
		inputs[i] = map[string]graph.Value{"x": x}
	}
	tr := backend.NewTrace()
	outs, err := ex.RunBatch(backend.WithTrace(context.Background(), tr), inputs)
	require.NoError(t, err)
	require.Len(t, outs, n)
	d0.step, d1.step = nil, nil
	for i, out := range outs {
		require.Equal(t, []float32{0, 0}, graph.View[float32](out["y"].(*graph.Tensor)), "request %d", i)
	}
	require.Len(t, d0.order, 1)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, d0.order[0], "d0 takes the requests in order")
	require.EqualValues(t, 1, d0.maxBusy.Load(), "one request at a time per segment")
	require.EqualValues(t, 1, d1.maxBusy.Load(), "one request at a time per segment")

	requests := map[string]map[int]bool{"d0": {}, "d1": {}}
	for _, ev := range tr.Events() {
		require.Contains(t, requests, ev.Logical, "%s on %s", ev.Name, ev.Device)
		requests[ev.Logical][ev.Request] = true
		if ev.Name == "neg" {
			require.Equal(t, planner.HostDevice, ev.Device)
			require.Equal(t, "d1", ev.Logical)
		}
	}
	for _, track := range []string{"d0", "d1"} {
		require.Len(t, requests[track], n, track)
	}
	overlap := backend.Overlap(tr.Events())
	t.Logf("overlap of d0 and d1 over %d requests: %.2f", n, overlap)
	require.Greater(t, overlap, 0.0)

	var buf bytes.Buffer
	require.NoError(t, tr.WriteChrome(&buf))
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	var tracks []string
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "M" {
			tracks = append(tracks, ev.Args["name"].(string))
		}
	}
	require.ElementsMatch(t, []string{"d0", "d1"}, tracks)

	one, err := ex.Run(backend.WithTrace(context.Background(), tr), inputs[3])
	require.NoError(t, err)
	require.Equal(t, graph.View[float32](outs[3]["y"].(*graph.Tensor)), graph.View[float32](one["y"].(*graph.Tensor)))
	last := tr.Events()
	require.Equal(t, n, last[len(last)-1].Request, "a Run after the batch takes the next request number")

	again, err := ex.RunBatch(backend.WithTrace(context.Background(), tr), inputs[:3])
	require.NoError(t, err)
	require.Len(t, again, 3)
	last = tr.Events()
	require.Equal(t, n+3, last[len(last)-1].Request, "a second batch takes the next request numbers")
}

// TestRunBatchCancel checks that a cancelled batch returns the context's
// error and does not hang.
func TestRunBatchCancel(t *testing.T) {
	g := graph.NewGraph("one")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Nodes = []*graph.Node{{Name: "neg", OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"y"}}}
	m := &graph.Model{Name: "one", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	cpu := hostfallback.NewDevice(nil)
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{cpu}})
	require.NoError(t, err)
	ex, err := backend.NewExecutor(p, []backend.Device{cpu})
	require.NoError(t, err)
	x, _ := graph.FromSlice(graph.Float, []int64{2}, []float32{1, 2})
	inputs := []map[string]graph.Value{{"x": x}, {"x": x}, {"x": x}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ex.RunBatch(ctx, inputs)
	require.ErrorIs(t, err, context.Canceled)
	_, err = ex.RunBatch(context.Background(), []map[string]graph.Value{{"x": x}, {}})
	require.ErrorIs(t, err, backend.ErrMissingInput)
	require.ErrorContains(t, err, "request 1")
}

// TestOverlap checks the overlap fraction on hand-made traces.
func TestOverlap(t *testing.T) {
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	ev := func(track string, start, end int) backend.TraceEvent {
		return backend.TraceEvent{Device: "vulkan:0", Logical: track, Start: ms(start), Dur: ms(end - start)}
	}
	for _, c := range []struct {
		evs  []backend.TraceEvent
		want float64
	}{
		{nil, 0},
		{[]backend.TraceEvent{ev("d0", 0, 10), ev("d0", 5, 15)}, 0},
		{[]backend.TraceEvent{ev("d0", 0, 10), ev("d1", 5, 15)}, 1.0 / 3},
		{[]backend.TraceEvent{ev("d0", 0, 10), ev("d0", 2, 4), ev("d1", 10, 20)}, 0},
		{[]backend.TraceEvent{ev("d0", 0, 10), ev("d1", 0, 10), ev("d2", 0, 10)}, 1},
		{[]backend.TraceEvent{ev("d0", 0, 4), ev("d0", 6, 10), ev("d1", 2, 8), ev("d1", 30, 40)}, 4.0 / 20},
	} {
		require.InDelta(t, c.want, backend.Overlap(c.evs), 1e-9, fmt.Sprint(c.evs))
	}
}

// TestRunShardsConcurrently runs a Relu whose input a sharding spec splits
// over logical devices d0 and d1 (one row each): within a single Run the
// two shards run at once (each waits for the other to start), after the
// scatter that feeds them and before the gather that joins them, and the
// result is whole.
func TestRunShardsConcurrently(t *testing.T) {
	g := graph.NewGraph("shards")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	spec := graph.ShardingSpec{TensorName: "x", Devices: []int64{0, 1},
		ShardedDims: []graph.ShardedDim{{Axis: 0, SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(2), NumShards: 2}}}}}
	g.Nodes = []*graph.Node{{Name: "r", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y"},
		DeviceConfigs: []graph.NodeDeviceConfiguration{{ConfigurationID: "tp", Sharding: []graph.ShardingSpec{spec}}}}}
	p, ex, d0, d1 := onStageDevices(t, g, "tp", nil)
	require.Len(t, p.Shards, 2)
	in0, in1 := make(chan struct{}), make(chan struct{})
	d0.step = func([]float32) error { return meet(in0, in1, "shard on d0") }
	d1.step = func([]float32) error { return meet(in1, in0, "shard on d1") }

	x, _ := graph.FromSlice(graph.Float, []int64{2, 3}, []float32{-1, 2, -3, 4, -5, 6})
	tr := backend.NewTrace()
	out, err := ex.Run(backend.WithTrace(context.Background(), tr), map[string]graph.Value{"x": x})
	require.NoError(t, err)
	require.Equal(t, []float32{0, 2, 0, 4, 0, 6}, graph.View[float32](out["y"].(*graph.Tensor)))
	var relus []backend.TraceEvent
	for _, ev := range tr.Events() {
		if ev.Op == "Relu" {
			relus = append(relus, ev)
		}
	}
	require.Len(t, relus, 2)
	a, b := relus[0], relus[1]
	require.True(t, a.Start < b.Start+b.Dur && b.Start < a.Start+a.Dur, "the shards' trace events do not overlap: %v+%v and %v+%v", a.Start, a.Dur, b.Start, b.Dur)
}

// TestConcurrentSegmentsKeepArenaSlots runs a = Neg(x) on the host, b =
// Relu(a) on logical device d1, which reads the host tensor it was given
// in place, and c = Neg(c2), c2 = Neg(x2) on the host; the plan puts c2 in
// a's arena slot, free once b has read a. The c steps do not depend on b,
// so they could run concurrently with it, but c2 must wait for b before it
// writes the slot: the CPU segment that computes c2 must not start before
// b has returned. b holds on until that segment starts or slotWait passes,
// so that an executor that let c2 start early is caught in the act.
func TestConcurrentSegmentsKeepArenaSlots(t *testing.T) {
	g := graph.NewGraph("slots")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(64))},
		{Name: "x2", Type: graph.TensorType(graph.Float, graph.ShapeOf(64))}}
	g.Outputs = []*graph.ValueInfo{{Name: "b"}, {Name: "c"}}
	g.Nodes = []*graph.Node{
		{Name: "a", OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"a"}},
		{Name: "b", OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"b"}, Index: 1,
			DeviceConfigs: []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", PipelineStage: 1, HasStage: true}}},
		{Name: "c2", OpType: "Neg", Inputs: []string{"x2"}, Outputs: []string{"c2"}, Index: 2},
		{Name: "c_neg", OpType: "Neg", Inputs: []string{"c2"}, Outputs: []string{"c"}, Index: 3},
	}
	var bDone atomic.Bool
	c2Started := make(chan struct{})
	started := func(steps []planner.Step) error {
		if !slices.ContainsFunc(steps, func(st planner.Step) bool { return st.Node != nil && st.Node.Name == "c2" }) {
			return nil
		}
		close(c2Started)
		if !bDone.Load() {
			return errors.New("c2 started writing a's arena slot before b, which reads a in place, returned")
		}
		return nil
	}
	p, ex, _, d1 := onStageDevices(t, g, "pp", started)
	const slotWait = 100 * time.Millisecond
	d1.step = func([]float32) error {
		select {
		case <-c2Started:
		case <-time.After(slotWait):
		}
		bDone.Store(true)
		return nil
	}
	a, c2 := p.Buffers[p.ValueIndex["a"]], p.Buffers[p.ValueIndex["c2"]]
	require.NotNil(t, a)
	require.NotNil(t, c2)
	require.Equal(t, a.Offset, c2.Offset, "c2 reuses a's slot")
	x, x2 := graph.NewTensor(graph.Float, []int64{64}), graph.NewTensor(graph.Float, []int64{64})
	for i := range 64 {
		graph.View[float32](x)[i] = -float32(i)
		graph.View[float32](x2)[i] = float32(1000 + i)
	}
	out, err := ex.Run(context.Background(), map[string]graph.Value{"x": x, "x2": x2})
	require.NoError(t, err)
	for i, v := range graph.View[float32](out["b"].(*graph.Tensor)) {
		require.Equal(t, float32(i), v, "b[%d] = relu(-x[%d])", i, i)
	}
}
