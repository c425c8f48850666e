package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// quiet is a logger that drops everything.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newTestServer serves the affine and echo models on the CPU; affine
// batches up to 8 rows within delay.
func newTestServer(t testing.TB, delay time.Duration, queue int) *Server {
	t.Helper()
	dir := t.TempDir()
	s, err := NewServer([]ModelConfig{
		{Name: "affine", Path: saveModel(t, dir, affineModel()), Device: "cpu", MaxBatchSize: 8, MaxQueueDelay: Duration(delay), QueueSize: queue},
		{Name: "echo", Path: saveModel(t, dir, echoModel()), Device: "cpu"},
	}, Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func affineRequest(rows [][]float32) *InferRequest {
	var data []float32
	for _, r := range rows {
		data = append(data, r...)
	}
	return &InferRequest{ModelName: "affine", Inputs: []RequestTensor{{Name: "x", Datatype: "FP32", Shape: []int64{int64(len(rows)), 4}, Data: data}}}
}

// affineWant computes the affine model's y for rows in Go.
func affineWant(rows [][]float32) []float32 {
	var out []float32
	for _, r := range rows {
		for j, v := range r {
			out = append(out, v*float32(j+1)+1)
		}
	}
	return out
}

func TestInferCore(t *testing.T) {
	s := newTestServer(t, 0, 8)
	rows := [][]float32{{1, 2, 3, 4}, {-1, 0.5, 0, 2}}
	resp, err := s.Infer(context.Background(), affineRequest(rows))
	require.NoError(t, err)
	require.Len(t, resp.Outputs, 2)
	assert.Equal(t, "y", resp.Outputs[0].Name)
	assert.Equal(t, []int64{2, 4}, resp.Outputs[0].Shape)
	assert.Equal(t, affineWant(rows), resp.Outputs[0].Values())
	assert.Equal(t, "1", resp.ModelVersion)

	req := affineRequest(rows)
	req.Outputs = []RequestedOutput{{Name: "s"}}
	resp, err = s.Infer(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Outputs, 1)
	assert.Equal(t, []float32{2, 4, 6, 8, -2, 1, 0, 4}, resp.Outputs[0].Values())

	for _, c := range []struct {
		req  *InferRequest
		code Code
		msg  string
	}{
		{&InferRequest{ModelName: "nope"}, CodeNotFound, "unknown model"},
		{&InferRequest{ModelName: "affine", ModelVersion: "2"}, CodeNotFound, "no version"},
		{&InferRequest{ModelName: "affine", Inputs: []RequestTensor{{Name: "x", Datatype: "INT32", Shape: []int64{1, 4}, Data: []int64{1, 2, 3, 4}}}}, CodeInvalidArgument, "datatype INT32"},
		{&InferRequest{ModelName: "affine", Inputs: []RequestTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 3}, Data: []float64{1, 2, 3}}}}, CodeInvalidArgument, "dimension 1 is 4"},
		{&InferRequest{ModelName: "affine", Inputs: []RequestTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 4}, Data: []float64{1, 2, 3}}}}, CodeInvalidArgument, "3 values"},
		{&InferRequest{ModelName: "affine", Inputs: []RequestTensor{{Name: "q", Datatype: "FP32", Shape: []int64{1, 4}}}}, CodeInvalidArgument, "no input \"q\""},
		{&InferRequest{ModelName: "affine"}, CodeInvalidArgument, "missing"},
		{func() *InferRequest { r := affineRequest(rows); r.Outputs = []RequestedOutput{{Name: "zz"}}; return r }(), CodeInvalidArgument, "no output \"zz\""},
	} {
		_, err := s.Infer(context.Background(), c.req)
		require.Error(t, err)
		assert.Equal(t, c.code, CodeOf(err), "%v", err)
		assert.Contains(t, strings.ToLower(err.Error()), strings.ToLower(c.msg))
		var pe *Error
		assert.True(t, errors.As(err, &pe))
	}
}

// TestWarmUp: a batching model whose only variable dimension is the
// batch compiles a plan for every batch size up to max_batch_size at load,
// and requests of those sizes then plan nothing more; one with a larger
// max_batch_size keeps the session's shape classes, warming a plan for 1
// row and a class for the others; a model with an input of strings is
// not warmed.
func TestWarmUp(t *testing.T) {
	dir := t.TempDir()
	s, err := NewServer([]ModelConfig{
		{Name: "affine", Path: saveModel(t, dir, affineModel()), Device: "cpu", MaxBatchSize: 8},
		{Name: "wide", Path: saveModel(t, dir, affineModel()), Device: "cpu", MaxBatchSize: maxPlannedBatch + 1},
		{Name: "echo", Path: saveModel(t, dir, echoModel()), Device: "cpu", MaxBatchSize: 8},
	}, Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	compiled := func(model string) float64 {
		var b strings.Builder
		s.WriteMetrics(&b)
		return metricValue(t, b.String(), fmt.Sprintf(`onnxvk_plans_compiled_total{model=%q}`, model))
	}
	assert.Equal(t, 8.0, compiled("affine"))
	assert.Equal(t, 2.0, compiled("wide"), "a plan for 1 row and a class")
	for _, model := range []string{"affine", "wide"} {
		for n := 1; n <= 8; n++ {
			rows := make([][]float32, n)
			for i := range rows {
				rows[i] = []float32{float32(i), float32(n), -1, 0.5}
			}
			req := affineRequest(rows)
			req.ModelName = model
			resp, err := s.Infer(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, affineWant(rows), resp.Outputs[0].Values())
		}
	}
	assert.Equal(t, 8.0, compiled("affine"), "a request planned after the warm-up")
	assert.Equal(t, 2.0, compiled("wide"), "a request planned after the warm-up")
	assert.Equal(t, 0.0, compiled("echo"))
}

// TestBatchLimit: a batching model refuses, with INVALID_ARGUMENT naming
// the limit, a request of more rows than its max_batch_size (as Triton
// does: no request is split, and none plans while serving) and one whose
// inputs disagree in their first dimension; a request of max_batch_size
// rows runs on the plan warmed for it.
func TestBatchLimit(t *testing.T) {
	dir := t.TempDir()
	s, err := NewServer([]ModelConfig{
		{Name: "affine", Path: saveModel(t, dir, affineModel()), Device: "cpu", MaxBatchSize: 8},
		{Name: "echo", Path: saveModel(t, dir, echoModel()), Device: "cpu", MaxBatchSize: 4},
	}, Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	rows := func(n int) [][]float32 {
		out := make([][]float32, n)
		for i := range out {
			out[i] = []float32{float32(i), -1, 0.25, 2}
		}
		return out
	}
	before := s.models["affine"].sess.PlanStats().Compiled
	_, err = s.Infer(context.Background(), affineRequest(rows(9)))
	require.Error(t, err)
	assert.Equal(t, CodeInvalidArgument, CodeOf(err))
	assert.Equal(t, `model "affine": a batch of 9 rows (the inputs' first dimension) is over the model's max_batch_size of 8`, err.Error())
	resp, err := s.Infer(context.Background(), affineRequest(rows(8)))
	require.NoError(t, err)
	assert.Equal(t, affineWant(rows(8)), resp.Outputs[0].Values())
	assert.Equal(t, before, s.models["affine"].sess.PlanStats().Compiled, "a plan compiled while serving")

	req := &InferRequest{ModelName: "echo"}
	for _, dt := range allDatatypes {
		in := RequestTensor{Name: "in_" + dt, Datatype: dt, Shape: []int64{2, 2}, Data: datatypeValues[dt]}
		if dt == "UINT32" {
			in.Shape, in.Data = []int64{3, 2}, []uint64{0, 1, 2, 3, 4, 5}
		}
		req.Inputs = append(req.Inputs, in)
	}
	_, err = s.Infer(context.Background(), req)
	require.Error(t, err)
	assert.Equal(t, CodeInvalidArgument, CodeOf(err))
	assert.Contains(t, err.Error(), `input "in_UINT32": 3 rows, but input "in_BOOL" has 2: model "echo" batches its inputs along their first dimension`)
}

// TestBatchingModelReadOnce loads, without mapping its file, a batching
// model that plans each batch size on its own: its file is read once
// (the bytes this process read, /proc/self/io's rchar, grow by its size,
// not twice it), and its session plans every batch size at load.
func TestBatchingModelReadOnce(t *testing.T) {
	path := saveModel(t, t.TempDir(), wideModel())
	st, err := os.Stat(path)
	require.NoError(t, err)
	if _, err := readBytes(); err != nil {
		testenv.Skip(t, fmt.Sprint("no /proc/self/io to count the bytes read: ", err))
	}
	before, err := readBytes()
	require.NoError(t, err)
	s, err := NewServer([]ModelConfig{{Name: "wide", Path: path, Device: "cpu", MaxBatchSize: 4}},
		Options{Logger: quiet, LoadOptions: []onnxvk.Option{onnxvk.WithoutMmap()}})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	after, err := readBytes()
	require.NoError(t, err)
	read := after - before
	t.Logf("the model's file is %d bytes; loading read %d", st.Size(), read)
	assert.GreaterOrEqual(t, read, st.Size())
	assert.Less(t, read, st.Size()+st.Size()/2, "the model's file was read more than once")
	assert.Equal(t, onnxvk.PlanStats{Compiled: 4, Cached: 4, CachedBytes: s.models["wide"].sess.PlanStats().CachedBytes},
		s.models["wide"].sess.PlanStats(), "a plan for each batch size, and no class")
}

// readBytes returns the bytes this process has read through system calls
// (rchar in /proc/self/io).
func readBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no rchar in /proc/self/io")
}

// TestInferBatchesMerge sends concurrent requests to a model that waits
// up to a second to fill batches of 8 rows: they run merged (the batch
// size histogram says so) and each gets its own rows' results.
func TestInferBatchesMerge(t *testing.T) {
	s := newTestServer(t, time.Second, 64)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows := [][]float32{{float32(i), 1, 2, 3}}
			resp, err := s.Infer(context.Background(), affineRequest(rows))
			if err == nil && !assert.ObjectsAreEqual(affineWant(rows), resp.Outputs[0].Values()) {
				err = errors.New("wrong result")
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	h := s.metrics.model("affine").batchSize
	assert.Less(t, h.n, int64(8), "8 requests ran in %d runs", h.n)
	assert.InDelta(t, 8, h.sum, 0)
}

func TestInferDeadline(t *testing.T) {
	s := newTestServer(t, time.Second, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := s.Infer(ctx, affineRequest([][]float32{{1, 2, 3, 4}}))
	assert.Equal(t, CodeDeadlineExceeded, CodeOf(err), "%v", err)
}

// datatypeValues are values of every datatype in the forms
// ResponseTensor.Values gives them back (BYTES includes bytes that are not
// UTF-8).
var datatypeValues = map[string]any{
	"BOOL": []bool{true, false, false, true}, "UINT8": []uint64{0, 1, 200, 255},
	"UINT16": []uint64{0, 1, 60000, 65535}, "UINT32": []uint64{0, 1, 1 << 31, 1<<32 - 1},
	"UINT64": []uint64{0, 1, 1 << 63, 1<<64 - 1}, "INT8": []int64{-128, -1, 0, 127},
	"INT16": []int64{-32768, -1, 0, 32767}, "INT32": []int64{-1 << 31, -1, 0, 1<<31 - 1},
	"INT64": []int64{-1 << 63, -1, 0, 1<<63 - 1}, "FP16": []float64{0.5, -2, 65504, 5.960464477539063e-08},
	"FP32": []float32{0.5, -2, 3.25, 1e-30}, "FP64": []float64{0.1, -2, 1e300, 5e-324},
	"BYTES": []string{"a", "", "héllo", "\x00\xff"}, "BF16": []float64{0.5, -2, 1.5, 256},
}

func TestDatatypesRoundTrip(t *testing.T) {
	s := newTestServer(t, 0, 8)
	values := datatypeValues
	req := &InferRequest{ModelName: "echo", ID: "r1"}
	for _, dt := range allDatatypes {
		req.Inputs = append(req.Inputs, RequestTensor{Name: "in_" + dt, Datatype: dt, Shape: []int64{2, 2}, Data: values[dt]})
	}
	resp, err := s.Infer(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "r1", resp.ID)
	require.Len(t, resp.Outputs, len(allDatatypes))
	for i, dt := range allDatatypes {
		out := resp.Outputs[i]
		assert.Equal(t, "out_"+dt, out.Name)
		assert.Equal(t, dt, out.Datatype)
		assert.Equal(t, values[dt], out.Values(), dt)
		// The binary form reads back to the same tensor.
		back, err := (&RequestTensor{Name: "b", Datatype: dt, Shape: out.Shape, Raw: out.Raw()}).Tensor()
		require.NoError(t, err, dt)
		rt, err := NewResponseTensor("b", back, nil)
		require.NoError(t, err)
		assert.Equal(t, values[dt], rt.Values(), dt)
	}
}

func TestTensorConversionErrors(t *testing.T) {
	for _, c := range []struct {
		in  RequestTensor
		msg string
	}{
		{RequestTensor{Datatype: "INT8", Shape: []int64{1}, Data: []int64{128}}, "out of the range"},
		{RequestTensor{Datatype: "UINT8", Shape: []int64{1}, Data: []int64{-1}}, "out of the range"},
		{RequestTensor{Datatype: "INT32", Shape: []int64{1}, Data: []float64{1.5}}, "not an integer"},
		{RequestTensor{Datatype: "FP32", Shape: []int64{2}, Data: []string{"a", "b"}}, "must be numbers"},
		{RequestTensor{Datatype: "BOOL", Shape: []int64{1}, Data: []int64{1}}, "true or false"},
		{RequestTensor{Datatype: "COMPLEX", Shape: []int64{1}}, "unknown datatype"},
		{RequestTensor{Datatype: "FP32", Shape: []int64{-1}}, "negative"},
		{RequestTensor{Datatype: "FP32", Shape: []int64{1 << 40, 1 << 40}}, "too many"},
		{RequestTensor{Datatype: "FP32", Shape: []int64{2}, Raw: []byte{1, 2, 3}}, "3 bytes"},
		{RequestTensor{Datatype: "BYTES", Shape: []int64{1}, Raw: []byte{9, 0, 0, 0, 'a'}}, "where 1 remain"},
		{RequestTensor{Datatype: "BYTES", Shape: []int64{2}, Raw: []byte{1, 0, 0, 0, 'a'}}, "1 BYTES elements"},
		{RequestTensor{Datatype: "FP32", Shape: []int64{1}}, "no data"},
	} {
		_, err := c.in.Tensor()
		require.Error(t, err, c.msg)
		assert.Contains(t, err.Error(), c.msg)
		assert.Equal(t, CodeInvalidArgument, CodeOf(err))
	}
	_, err := NewResponseTensor("c", mustTensor(t), nil)
	assert.Equal(t, CodeInternal, CodeOf(err))
}

func mustTensor(t *testing.T) *onnxvk.Tensor {
	x, err := onnxvk.NewTensor([]int64{1}, []complex64{1})
	require.NoError(t, err)
	return x
}

// TestInferMergedRunFallsBack merges requests for a model whose output
// cannot be split by rows: the merged Run's outputs are refused and each
// request runs alone, getting its own rows' sums.
func TestInferMergedRunFallsBack(t *testing.T) {
	var logs syncBuffer
	s, err := NewServer([]ModelConfig{{Name: "sumrows", Path: saveModel(t, t.TempDir(), sumRowsModel()), Device: "cpu",
		MaxBatchSize: 8, MaxQueueDelay: Duration(2 * time.Second)}}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := float32(i)
			req := &InferRequest{ModelName: "sumrows", Inputs: []RequestTensor{{Name: "x", Datatype: "FP32", Shape: []int64{2, 4},
				Data: []float32{f, 1, 2, 3, f, 1, 2, 3}}}}
			resp, err := s.Infer(context.Background(), req)
			if assert.NoError(t, err) {
				assert.Equal(t, []float32{2 * f, 2, 4, 6}, resp.Outputs[0].Values())
			}
		}()
	}
	wg.Wait()
	h := s.metrics.model("sumrows").batchSize
	assert.Equal(t, int64(4), h.n, "each request ran alone")
	assert.Contains(t, logs.String(), "a merged run failed; running its requests one by one")
	assert.Contains(t, logs.String(), "requests=4")
}

// TestUnloadFailsQueued unloads a model with requests queued behind a
// slow Run: each request is answered, with its result or UNAVAILABLE.
func TestUnloadFailsQueued(t *testing.T) {
	s, err := NewServer([]ModelConfig{{Name: "slow", Path: saveModel(t, t.TempDir(), slowModel()), Device: "cpu", QueueSize: 16}}, Options{Logger: quiet})
	require.NoError(t, err)
	defer s.Close()
	x := make([]float32, 512)
	codes := make(chan Code, 8)
	for range 8 {
		go func() {
			_, err := s.Infer(context.Background(), &InferRequest{ModelName: "slow", Inputs: []RequestTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 512}, Data: x}}})
			codes <- CodeOf(err)
		}()
	}
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, s.UnloadModel(context.Background(), "slow"))
	seen := map[Code]int{}
	for range 8 {
		select {
		case c := <-codes:
			seen[c]++
		case <-time.After(30 * time.Second):
			t.Fatalf("a request was not answered after the unload: %v", seen)
		}
	}
	assert.Equal(t, 8, seen[CodeOK]+seen[CodeUnavailable]+seen[CodeNotFound], "%v", seen)
	ok, err := s.ModelReady(context.Background(), "slow", "")
	assert.False(t, ok)
	assert.Equal(t, CodeNotFound, CodeOf(err))
}
