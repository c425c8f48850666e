package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/serve/kservepb"
)

// startGRPC serves s over gRPC on a loopback port and returns a client of
// the generated stubs and the frontend (stopped at the end of the test).
func startGRPC(t *testing.T, s *Server, opts GRPCOptions) (kservepb.GRPCInferenceServiceClient, *GRPCFrontend) {
	t.Helper()
	f, err := NewGRPC(s, "127.0.0.1:0", opts)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- f.Serve() }()
	t.Cleanup(func() {
		f.g.Stop()
		require.NoError(t, <-done)
	})
	return kservepb.NewGRPCInferenceServiceClient(mustConn(t, f.Addr())), f
}

// codeOf returns the gRPC code of err.
func codeOf(err error) codes.Code { return status.Code(err) }

func f32Bytes(v []float32) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

func affineProto(rows [][]float32) *kservepb.ModelInferRequest {
	var data []float32
	for _, r := range rows {
		data = append(data, r...)
	}
	return &kservepb.ModelInferRequest{ModelName: "affine", Id: "req-7", Inputs: []*kservepb.ModelInferRequest_InferInputTensor{{
		Name: "x", Datatype: "FP32", Shape: []int64{int64(len(rows)), 4},
		Contents: &kservepb.InferTensorContents{Fp32Contents: data},
	}}}
}

func TestGRPCHealthAndMetadata(t *testing.T) {
	s := newTestServer(t, 0, 8)
	c, _ := startGRPC(t, s, GRPCOptions{})
	ctx := context.Background()

	live, err := c.ServerLive(ctx, &kservepb.ServerLiveRequest{})
	require.NoError(t, err)
	assert.True(t, live.GetLive())
	ready, err := c.ServerReady(ctx, &kservepb.ServerReadyRequest{})
	require.NoError(t, err)
	assert.True(t, ready.GetReady())
	md, err := c.ServerMetadata(ctx, &kservepb.ServerMetadataRequest{})
	require.NoError(t, err)
	assert.Equal(t, "onnxvk", md.GetName())
	assert.NotEmpty(t, md.GetVersion())
	assert.Equal(t, Extensions, md.GetExtensions())

	mr, err := c.ModelReady(ctx, &kservepb.ModelReadyRequest{Name: "affine"})
	require.NoError(t, err)
	assert.True(t, mr.GetReady())
	mr, err = c.ModelReady(ctx, &kservepb.ModelReadyRequest{Name: "affine", Version: "1"})
	require.NoError(t, err)
	assert.True(t, mr.GetReady())
	_, err = c.ModelReady(ctx, &kservepb.ModelReadyRequest{Name: "nope"})
	assert.Equal(t, codes.NotFound, codeOf(err), "%v", err)
	_, err = c.ModelReady(ctx, &kservepb.ModelReadyRequest{Name: "affine", Version: "9"})
	assert.Equal(t, codes.NotFound, codeOf(err), "%v", err)

	mm, err := c.ModelMetadata(ctx, &kservepb.ModelMetadataRequest{Name: "affine"})
	require.NoError(t, err)
	assert.Equal(t, "affine", mm.GetName())
	assert.Equal(t, []string{"1"}, mm.GetVersions())
	assert.Equal(t, "onnx", mm.GetPlatform())
	require.Len(t, mm.GetInputs(), 1)
	assert.Equal(t, "x", mm.GetInputs()[0].GetName())
	assert.Equal(t, "FP32", mm.GetInputs()[0].GetDatatype())
	assert.Equal(t, []int64{-1, 4}, mm.GetInputs()[0].GetShape())
	require.Len(t, mm.GetOutputs(), 2)
	assert.Equal(t, "y", mm.GetOutputs()[0].GetName())
	assert.Equal(t, "s", mm.GetOutputs()[1].GetName())
	_, err = c.ModelMetadata(ctx, &kservepb.ModelMetadataRequest{Name: "nope"})
	assert.Equal(t, codes.NotFound, codeOf(err), "%v", err)
	_, err = c.ModelMetadata(ctx, &kservepb.ModelMetadataRequest{Name: "affine", Version: "2"})
	assert.Equal(t, codes.NotFound, codeOf(err), "%v", err)
}

func TestGRPCInfer(t *testing.T) {
	s := newTestServer(t, 0, 8)
	c, _ := startGRPC(t, s, GRPCOptions{})
	ctx := context.Background()
	rows := [][]float32{{1, 2, 3, 4}, {-1, 0.5, 0, 2}}

	// Typed contents in, typed contents out, every output, the id echoed.
	resp, err := c.ModelInfer(ctx, affineProto(rows))
	require.NoError(t, err)
	assert.Equal(t, "affine", resp.GetModelName())
	assert.Equal(t, "1", resp.GetModelVersion())
	assert.Equal(t, "req-7", resp.GetId())
	assert.Empty(t, resp.GetRawOutputContents())
	require.Len(t, resp.GetOutputs(), 2)
	y := resp.GetOutputs()[0]
	assert.Equal(t, "y", y.GetName())
	assert.Equal(t, "FP32", y.GetDatatype())
	assert.Equal(t, []int64{2, 4}, y.GetShape())
	assert.Equal(t, affineWant(rows), y.GetContents().GetFp32Contents())
	assert.Equal(t, []float32{2, 4, 6, 8, -2, 1, 0, 4}, resp.GetOutputs()[1].GetContents().GetFp32Contents())

	// A requested output only, and raw contents both ways.
	req := affineProto(rows)
	req.RawInputContents = [][]byte{f32Bytes(req.Inputs[0].Contents.Fp32Contents)}
	req.Inputs[0].Contents = nil
	req.Outputs = []*kservepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "y"}}
	resp, err = c.ModelInfer(ctx, req)
	require.NoError(t, err)
	require.Len(t, resp.GetOutputs(), 1)
	assert.Equal(t, "y", resp.GetOutputs()[0].GetName())
	assert.Nil(t, resp.GetOutputs()[0].GetContents())
	assert.Equal(t, [][]byte{f32Bytes(affineWant(rows))}, resp.GetRawOutputContents())

	// Typed in, raw out on request.
	req = affineProto(rows)
	req.Parameters = map[string]*kservepb.InferParameter{"binary_data_output": {ParameterChoice: &kservepb.InferParameter_BoolParam{BoolParam: true}}}
	resp, err = c.ModelInfer(ctx, req)
	require.NoError(t, err)
	assert.Len(t, resp.GetRawOutputContents(), 2)
}

// TestGRPCDatatypes echoes a tensor of every datatype through the echo
// model, raw both ways; typed contents of FP16 are refused; and the typed
// contents of every other datatype survive the way there and back.
func TestGRPCDatatypes(t *testing.T) {
	s := newTestServer(t, 0, 8)
	c, _ := startGRPC(t, s, GRPCOptions{})
	ctx := context.Background()
	raw := map[string][]byte{
		"BOOL": {1, 0, 0, 1}, "UINT8": {0, 1, 200, 255}, "INT8": {0x80, 0xff, 0, 0x7f},
		"BYTES": {1, 0, 0, 0, 'a', 0, 0, 0, 0, 2, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 'x', 'y', 'z'},
	}
	for _, dt := range allDatatypes {
		if raw[dt] != nil {
			continue
		}
		d, _ := DType(dt)
		b := make([]byte, d.ByteSize(4))
		for i := range b {
			b[i] = byte(i*37 + len(dt))
		}
		if dt == "FP16" || dt == "BF16" || dt == "FP32" || dt == "FP64" {
			// Finite values only: 0x3c00-ish patterns, sign bit clear.
			for i := d.Size() - 1; i < len(b); i += d.Size() {
				b[i] = 0x3c
			}
		}
		raw[dt] = b
	}
	req := &kservepb.ModelInferRequest{ModelName: "echo"}
	for _, dt := range allDatatypes {
		req.Inputs = append(req.Inputs, &kservepb.ModelInferRequest_InferInputTensor{Name: "in_" + dt, Datatype: dt, Shape: []int64{2, 2}})
		req.RawInputContents = append(req.RawInputContents, raw[dt])
	}
	resp, err := c.ModelInfer(ctx, req)
	require.NoError(t, err)
	require.Len(t, resp.GetOutputs(), len(allDatatypes))
	for i, dt := range allDatatypes {
		assert.Equal(t, "out_"+dt, resp.GetOutputs()[i].GetName())
		assert.Equal(t, dt, resp.GetOutputs()[i].GetDatatype())
		assert.Equal(t, raw[dt], resp.GetRawOutputContents()[i], dt)
	}

	typed := map[string]*kservepb.InferTensorContents{
		"BOOL":   {BoolContents: []bool{true, false, false, true}},
		"UINT8":  {UintContents: []uint32{0, 1, 200, 255}},
		"UINT16": {UintContents: []uint32{0, 1, 60000, 65535}},
		"UINT32": {UintContents: []uint32{0, 1, 1 << 31, 1<<32 - 1}},
		"UINT64": {Uint64Contents: []uint64{0, 1, 1 << 63, 1<<64 - 1}},
		"INT8":   {IntContents: []int32{-128, -1, 0, 127}},
		"INT16":  {IntContents: []int32{-32768, -1, 0, 32767}},
		"INT32":  {IntContents: []int32{-1 << 31, -1, 0, 1<<31 - 1}},
		"INT64":  {Int64Contents: []int64{-1 << 63, -1, 0, 1<<63 - 1}},
		"FP32":   {Fp32Contents: []float32{0.5, -2, 3.25, 1e-30}},
		"FP64":   {Fp64Contents: []float64{0.1, -2, 1e300, 5e-324}},
		"BYTES":  {BytesContents: [][]byte{[]byte("a"), {}, []byte("héllo"), {0, 0xff}}},
	}
	req = &kservepb.ModelInferRequest{ModelName: "echo"}
	for _, dt := range allDatatypes {
		in := &kservepb.ModelInferRequest_InferInputTensor{Name: "in_" + dt, Datatype: dt, Shape: []int64{2, 2}, Contents: typed[dt]}
		if typed[dt] == nil {
			req.Outputs = append(req.Outputs, &kservepb.ModelInferRequest_InferRequestedOutputTensor{Name: "out_" + dt})
			in.Contents = &kservepb.InferTensorContents{}
		}
		req.Inputs = append(req.Inputs, in)
	}
	// FP16 and BF16 have no typed field: as typed contents they are refused.
	_, err = c.ModelInfer(ctx, req)
	assert.Equal(t, codes.InvalidArgument, codeOf(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "must be sent in raw contents")

	// The typed datatypes' values, raw in and so raw out (the echo model
	// wants its FP16 and BF16 inputs too, and those travel raw only), read
	// back and converted to typed contents: as sent.
	req = &kservepb.ModelInferRequest{ModelName: "echo"}
	for _, dt := range allDatatypes {
		req.Inputs = append(req.Inputs, &kservepb.ModelInferRequest_InferInputTensor{Name: "in_" + dt, Datatype: dt, Shape: []int64{2, 2}})
		in, err := InferRequestFromProto(&kservepb.ModelInferRequest{ModelName: "echo", Inputs: []*kservepb.ModelInferRequest_InferInputTensor{
			{Name: "in_" + dt, Datatype: dt, Shape: []int64{2, 2}, Contents: typed[dt]}}})
		if typed[dt] == nil {
			req.RawInputContents = append(req.RawInputContents, raw[dt])
			continue
		}
		require.NoError(t, err, dt)
		tt, err := in.Inputs[0].Tensor()
		require.NoError(t, err, dt)
		rt, err := NewResponseTensor("in_"+dt, tt, nil)
		require.NoError(t, err, dt)
		req.RawInputContents = append(req.RawInputContents, rt.Raw())
	}
	for _, dt := range allDatatypes {
		if typed[dt] != nil {
			req.Outputs = append(req.Outputs, &kservepb.ModelInferRequest_InferRequestedOutputTensor{Name: "out_" + dt})
		}
	}
	req.Parameters = nil
	resp, err = c.ModelInfer(ctx, req)
	require.NoError(t, err)
	back, err := InferResponseFromProto(resp)
	require.NoError(t, err)
	m, err := InferResponseToProto(back, false)
	require.NoError(t, err)
	for i, o := range m.GetOutputs() {
		dt := o.GetDatatype()
		assert.Equal(t, "out_"+dt, o.GetName())
		assert.Equal(t, typed[dt].String(), o.GetContents().String(), dt)
		assert.Equal(t, []int64{2, 2}, back.Outputs[i].Shape)
	}
}

func TestGRPCInferErrors(t *testing.T) {
	s := newTestServer(t, 0, 8)
	c, _ := startGRPC(t, s, GRPCOptions{MaxMessageBytes: 4096})
	ctx := context.Background()
	rows := [][]float32{{1, 2, 3, 4}}
	edit := func(f func(r *kservepb.ModelInferRequest)) *kservepb.ModelInferRequest {
		r := affineProto(rows)
		f(r)
		return r
	}
	for _, c2 := range []struct {
		name string
		req  *kservepb.ModelInferRequest
		code codes.Code
		msg  string
	}{
		{"unknown model", edit(func(r *kservepb.ModelInferRequest) { r.ModelName = "nope" }), codes.NotFound, "unknown model"},
		{"unknown version", edit(func(r *kservepb.ModelInferRequest) { r.ModelVersion = "3" }), codes.NotFound, "no version"},
		{"wrong datatype", edit(func(r *kservepb.ModelInferRequest) {
			r.Inputs[0].Datatype = "INT32"
			r.Inputs[0].Contents = &kservepb.InferTensorContents{IntContents: []int32{1, 2, 3, 4}}
		}), codes.InvalidArgument, "INT32"},
		{"contents in another field", edit(func(r *kservepb.ModelInferRequest) {
			r.Inputs[0].Contents = &kservepb.InferTensorContents{IntContents: []int32{1, 2, 3, 4}}
		}), codes.InvalidArgument, "int_contents"},
		{"wrong shape", edit(func(r *kservepb.ModelInferRequest) {
			r.Inputs[0].Shape = []int64{1, 3}
			r.Inputs[0].Contents.Fp32Contents = []float32{1, 2, 3}
		}), codes.InvalidArgument, "dimension 1 is 4"},
		{"over max_batch_size", edit(func(r *kservepb.ModelInferRequest) {
			r.Inputs[0].Shape = []int64{9, 4}
			r.Inputs[0].Contents.Fp32Contents = make([]float32, 36)
		}), codes.InvalidArgument, "a batch of 9 rows (the inputs' first dimension) is over the model's max_batch_size of 8"},
		{"too few values", edit(func(r *kservepb.ModelInferRequest) { r.Inputs[0].Shape = []int64{2, 4} }), codes.InvalidArgument, "4 values"},
		{"unknown datatype", edit(func(r *kservepb.ModelInferRequest) { r.Inputs[0].Datatype = "FP128" }), codes.InvalidArgument, "unknown datatype"},
		{"no contents", edit(func(r *kservepb.ModelInferRequest) { r.Inputs[0].Contents = nil }), codes.InvalidArgument, "no contents"},
		{"raw beside contents", edit(func(r *kservepb.ModelInferRequest) { r.RawInputContents = [][]byte{f32Bytes(rows[0])} }), codes.InvalidArgument, "beside raw"},
		{"raw count", edit(func(r *kservepb.ModelInferRequest) {
			r.Inputs[0].Contents = nil
			r.RawInputContents = [][]byte{f32Bytes(rows[0]), {}}
		}), codes.InvalidArgument, "2 raw_input_contents for 1 inputs"},
		{"raw length", edit(func(r *kservepb.ModelInferRequest) {
			r.Inputs[0].Contents = nil
			r.RawInputContents = [][]byte{f32Bytes(rows[0])[:15]}
		}), codes.InvalidArgument, "15 bytes"},
		{"unknown input", edit(func(r *kservepb.ModelInferRequest) { r.Inputs[0].Name = "q" }), codes.InvalidArgument, "no input \"q\""},
		{"unknown output", edit(func(r *kservepb.ModelInferRequest) {
			r.Outputs = []*kservepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "zz"}}
		}), codes.InvalidArgument, "no output \"zz\""},
		{"bad parameter", edit(func(r *kservepb.ModelInferRequest) {
			r.Parameters = map[string]*kservepb.InferParameter{"binary_data_output": {ParameterChoice: &kservepb.InferParameter_StringParam{StringParam: "yes"}}}
		}), codes.InvalidArgument, "must be a bool"},
		{"over the message limit", edit(func(r *kservepb.ModelInferRequest) {
			r.Inputs[0].Shape = []int64{300, 4}
			r.Inputs[0].Contents.Fp32Contents = make([]float32, 1200)
		}), codes.ResourceExhausted, "larger than max"},
	} {
		_, err := c.ModelInfer(ctx, c2.req)
		if assert.Equal(t, c2.code, codeOf(err), "%s: %v", c2.name, err) {
			assert.Contains(t, status.Convert(err).Message(), c2.msg, c2.name)
		}
	}
}

// TestGRPCDeadline: a request waiting for its batch to fill ends at the
// client's deadline with DEADLINE_EXCEEDED, and the server's handler sees
// it through its context (called directly, so that the client's own timer
// cannot be what answers).
func TestGRPCDeadline(t *testing.T) {
	s := newTestServer(t, 5*time.Second, 8)
	c, _ := startGRPC(t, s, GRPCOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.ModelInfer(ctx, affineProto([][]float32{{1, 2, 3, 4}}))
	assert.Equal(t, codes.DeadlineExceeded, codeOf(err), "%v", err)
	assert.Less(t, time.Since(start), 4*time.Second)

	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = (&grpcService{s: s}).ModelInfer(ctx2, affineProto([][]float32{{1, 2, 3, 4}}))
	assert.Equal(t, codes.DeadlineExceeded, codeOf(err), "%v", err)
}

// floodAffine sends n requests to the affine model at once, each a row
// of its own, and returns a function that waits for them and returns
// how many got their right result, the RESOURCE_EXHAUSTED errors and the
// other outcomes.
func floodAffine(c kservepb.GRPCInferenceServiceClient, n int) func() (ok int, full, others []error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		good int
		exh  []error
		bad  []error
	)
	for i := range n {
		wg.Go(func() {
			rows := [][]float32{{float32(i), 1, 2, 3}}
			resp, err := c.ModelInfer(context.Background(), affineProto(rows))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && assert.ObjectsAreEqual(affineWant(rows), resp.GetOutputs()[0].GetContents().GetFp32Contents()):
				good++
			case codeOf(err) == codes.ResourceExhausted:
				exh = append(exh, err)
			default:
				bad = append(bad, fmt.Errorf("%v (response %v)", err, resp))
			}
		})
	}
	return func() (int, []error, []error) {
		wg.Wait()
		return good, exh, bad
	}
}

// TestGRPCOverload floods a model with a queue of 2 that waits a while to
// fill its batches: the requests beyond the queue get RESOURCE_EXHAUSTED
// at once, the others their results, and the server answers normally
// afterwards.
func TestGRPCOverload(t *testing.T) {
	s := newTestServer(t, 300*time.Millisecond, 2)
	c, _ := startGRPC(t, s, GRPCOptions{})
	const n = 40
	ok, full, others := floodAffine(c, n)()
	assert.Empty(t, others)
	assert.Positive(t, ok)
	assert.NotEmpty(t, full, "no request was refused")
	assert.Equal(t, n, ok+len(full))
	resp, err := c.ModelInfer(context.Background(), affineProto([][]float32{{1, 1, 1, 1}}))
	require.NoError(t, err)
	assert.Equal(t, affineWant([][]float32{{1, 1, 1, 1}}), resp.GetOutputs()[0].GetContents().GetFp32Contents())
}

// TestGRPCDrainAndShutdown: while the server drains, it is not ready and
// refuses inference with UNAVAILABLE; Shutdown lets the request in
// flight finish.
func TestGRPCDrainAndShutdown(t *testing.T) {
	s := newTestServer(t, 300*time.Millisecond, 8)
	c, f := startGRPC(t, s, GRPCOptions{})
	ctx := context.Background()
	rows := [][]float32{{1, 2, 3, 4}}
	type result struct {
		resp *kservepb.ModelInferResponse
		err  error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := c.ModelInfer(ctx, affineProto(rows))
		inflight <- result{resp, err}
	}()
	// The request waits in its batch for 300 ms; shut down once the
	// server holds it (a fixed sleep could end before a loaded machine
	// sent it, and the request would find the port closing).
	require.Eventually(t, func() bool { return f.calls.calls.Load() == 1 }, 10*time.Second, time.Millisecond)
	stopped := make(chan struct{})
	go func() {
		assert.NoError(t, f.Shutdown(ctx))
		close(stopped)
	}()
	r := <-inflight
	require.NoError(t, r.err)
	assert.Equal(t, affineWant(rows), r.resp.GetOutputs()[0].GetContents().GetFp32Contents())
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after the last request")
	}

	s2 := newTestServer(t, 0, 8)
	c2, _ := startGRPC(t, s2, GRPCOptions{})
	s2.Drain()
	ready, err := c2.ServerReady(ctx, &kservepb.ServerReadyRequest{})
	require.NoError(t, err)
	assert.False(t, ready.GetReady())
	live, err := c2.ServerLive(ctx, &kservepb.ServerLiveRequest{})
	require.NoError(t, err)
	assert.True(t, live.GetLive())
	_, err = c2.ModelInfer(ctx, affineProto(rows))
	assert.Equal(t, codes.Unavailable, codeOf(err), "%v", err)
}

// TestGRPCShutdownDeadline: when the context ends before the RPCs in
// flight, Shutdown closes them and returns the context's error.
func TestGRPCShutdownDeadline(t *testing.T) {
	s := newTestServer(t, 5*time.Second, 8)
	c, f := startGRPC(t, s, GRPCOptions{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.ModelInfer(context.Background(), affineProto([][]float32{{1, 2, 3, 4}}))
		errc <- err
	}()
	// The request waits 5 s for its batch: shut down once the server
	// holds it.
	require.Eventually(t, func() bool { return f.calls.calls.Load() == 1 }, 10*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	assert.ErrorIs(t, f.Shutdown(ctx), context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Error(t, <-errc)
}

// TestGRPCCallLimit: ModelInfer calls beyond GRPCOptions.MaxInferCalls
// are refused with RESOURCE_EXHAUSTED at once, before their message is
// read, while the others run and other methods answer; each call's place
// is given back when it ends, however it ends.
func TestGRPCCallLimit(t *testing.T) {
	s := newTestServer(t, 300*time.Millisecond, 64)
	assert.Equal(t, (64+8)+(64+1), s.InferCapacity(), "affine: queue and a batch of 8; echo: queue and one request")
	c, f := startGRPC(t, s, GRPCOptions{MaxInferCalls: 3})
	const n = 12
	wait := floodAffine(c, n)
	// The calls admitted wait 300 ms for their batch to fill: meanwhile
	// the limit is reached, and the other methods still answer.
	require.Eventually(t, func() bool { return f.calls.calls.Load() == 3 }, 10*time.Second, time.Millisecond)
	live, err := c.ServerLive(context.Background(), &kservepb.ServerLiveRequest{})
	require.NoError(t, err)
	assert.True(t, live.GetLive())
	ok, full, others := wait()
	assert.Empty(t, others)
	assert.NotEmpty(t, full, "no call was refused")
	for _, err := range full {
		assert.Contains(t, err.Error(), "the server holds 3 inference calls, its limit")
	}
	assert.GreaterOrEqual(t, ok, 3)
	assert.Equal(t, n, ok+len(full))
	require.Eventually(t, func() bool { return f.calls.calls.Load() == 0 }, 10*time.Second, time.Millisecond, "the calls' places came back")

	// A call that ends early (its deadline passes in the queue) gives its
	// place back too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.ModelInfer(ctx, affineProto([][]float32{{1, 1, 1, 1}}))
	assert.Equal(t, codes.DeadlineExceeded, codeOf(err), "%v", err)
	require.Eventually(t, func() bool { return f.calls.calls.Load() == 0 }, 10*time.Second, time.Millisecond)
	resp, err := c.ModelInfer(context.Background(), affineProto([][]float32{{1, 1, 1, 1}}))
	require.NoError(t, err)
	assert.Equal(t, affineWant([][]float32{{1, 1, 1, 1}}), resp.GetOutputs()[0].GetContents().GetFp32Contents())
}

// overloadRSSBound is what TestGRPCOverloadLong lets the server's
// resident memory grow by under overload, beyond its size after a first
// request: room for the calls it holds (its queue of 32 and one
// running, each message held as received, decoded, as a tensor, and its
// output and response) and the buffers of 500 connections, where one
// message per call in flight would take 500 × 512 KiB several times.
const overloadRSSBound = 192 << 20

// TestGRPCOverloadLong runs `onnxvk serve --grpc` on a slow model whose
// queue holds 32 and sends it 500 concurrent gRPC clients, each on its
// own connection, for up to 10 s (at most 20 requests each), each request
// a 512 KiB message of raw contents: every request gets its result or
// RESOURCE_EXHAUSTED, nothing else; the server's resident memory
// (sampled throughout) grows by less than overloadRSSBound, as the calls
// beyond its capacity are refused before their message is read; and once
// the load ends, a request is answered.
func TestGRPCOverloadLong(t *testing.T) {
	testenv.SkipLong(t)
	bin := buildCommand(t)
	model := saveModel(t, t.TempDir(), slowModel())
	cmd, addrs, stderr := startServeAddrs(t, bin, "gRPC", "--grpc", "127.0.0.1:0", "--device", "cpu", "--queue", "32", "--log-level", "error", model)
	x := make([]float32, 256*512)
	for i := range x {
		x[i] = float32(i%7) / 7
	}
	req := &kservepb.ModelInferRequest{ModelName: "slow", Inputs: []*kservepb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{256, 512}}},
		RawInputContents: [][]byte{f32Bytes(x)}}
	first, err := kservepb.NewGRPCInferenceServiceClient(mustConn(t, addrs["gRPC"])).ModelInfer(context.Background(), req)
	require.NoError(t, err, "stderr: %s", stderr.String())
	wantOutput := first.GetRawOutputContents()[0]
	baseRSS := rssOf(cmd.Process.Pid)
	if baseRSS == 0 {
		testenv.Skip(t, "no /proc/PID/status to read the server's memory from")
	}

	var (
		peakRSS  atomic.Int64
		sampling = make(chan struct{})
		sampled  sync.WaitGroup
	)
	sampled.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if r := rssOf(cmd.Process.Pid); r > peakRSS.Load() {
				peakRSS.Store(r)
			}
			select {
			case <-sampling:
				return
			case <-tick.C:
			}
		}
	})
	const clients, perClient = 500, 20
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, full int
		others   []error
		okTimes  []float64
		stop     = time.Now().Add(10 * time.Second)
	)
	for range clients {
		wg.Go(func() {
			conn, err := grpc.NewClient(addrs["gRPC"], grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				mu.Lock()
				others = append(others, err)
				mu.Unlock()
				return
			}
			defer conn.Close()
			c := kservepb.NewGRPCInferenceServiceClient(conn)
			for i := 0; i < perClient && time.Now().Before(stop); i++ {
				start := time.Now()
				resp, err := c.ModelInfer(context.Background(), req)
				took := time.Since(start)
				mu.Lock()
				switch {
				case err == nil && bytes.Equal(wantOutput, resp.GetRawOutputContents()[0]):
					ok++
					okTimes = append(okTimes, took.Seconds()*1000)
				case codeOf(err) == codes.ResourceExhausted:
					full++
				case err == nil:
					others = append(others, errors.New("an output differs from the first one"))
				default:
					others = append(others, err)
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	close(sampling)
	sampled.Wait()
	assert.Empty(t, others)
	assert.Positive(t, ok)
	assert.Positive(t, full, "no request was refused")
	grew := peakRSS.Load() - baseRSS
	assert.Less(t, grew, int64(overloadRSSBound), "the server's RSS grew from %d to %d bytes", baseRSS, peakRSS.Load())
	resp, err := kservepb.NewGRPCInferenceServiceClient(mustConn(t, addrs["gRPC"])).ModelInfer(context.Background(), req)
	require.NoError(t, err, "after the load")
	assert.Equal(t, wantOutput, resp.GetRawOutputContents()[0])
	slices.Sort(okTimes)
	t.Logf("%d clients, 512 KiB requests: %d answered (p50 %.0f ms, p99 %.0f ms), %d RESOURCE_EXHAUSTED, %d other errors; server RSS %.0f MiB after a first request, peak %.0f MiB (+%.0f MiB, bound %d MiB)",
		clients, ok, okTimes[len(okTimes)/2], okTimes[len(okTimes)*99/100], full, len(others),
		float64(baseRSS)/(1<<20), float64(peakRSS.Load())/(1<<20), float64(grew)/(1<<20), overloadRSSBound>>20)
}

// mustConn dials addr over loopback without TLS, closed at the end of the test.
func mustConn(t *testing.T, addr string) *grpc.ClientConn {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}
