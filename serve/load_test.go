package serve_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/serve"
	"github.com/onnxvk/onnxvk/serve/client"
)

// batchedResnet18 writes torchvision's resnet18, exported with batch 1,
// with a symbolic batch dimension instead, so that the server may merge
// requests.
func batchedResnet18(t *testing.T) string {
	cache := torchmodels.Cache(t, "..")
	torchmodels.Export(t, "..", cache, []string{"resnet18"})
	m, err := loader.Load(filepath.Join(cache, "resnet18", "model.onnx"), loader.WithoutMmap())
	require.NoError(t, err)
	defer m.Close()
	for _, vi := range append(slices.Clone(m.Graph.Inputs), m.Graph.Outputs...) {
		vi.Type.Shape[0] = graph.SymDim("batch")
	}
	m.Graph.ValueInfo = map[string]*graph.ValueInfo{}
	path := filepath.Join(t.TempDir(), "resnet18.onnx")
	require.NoError(t, loader.Save(m, path))
	return path
}

// loadResult is what a load phase measured.
type loadResult struct {
	ok                  int
	statuses            map[int]int
	failures            []string
	p50, p99            time.Duration
	throughput          float64
	rssStart, rssEnd    int64
	rssPeak             int64
	runs, mergedRequest float64
	// memory samples the process every 250 ms from the start of the
	// load to its end; plansBefore and plansAfter count the plans the
	// model's session compiled before the load (after its warm-up) and
	// after it.
	memory      []memSample
	plansBefore float64
	plansAfter  float64
	elapsed     time.Duration
	// liveStart and liveEnd are the heap the process holds after a
	// collection before the load and after it (the requests drained).
	liveStart, liveEnd int64
}

// memSample is the process's memory at a moment of a load phase: RSS,
// Go heap in use, and the live heap as the latest collection found it.
type memSample struct {
	at              time.Duration
	rss, heap, live int64
}

// liveHeap collects garbage and returns the heap still allocated.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// lastLive returns the heap that the latest collection found live.
func lastLive() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// peaks returns the highest RSS sampled before from, and the highest
// sampled from then on.
func (r loadResult) peaks(from time.Duration) (before, after int64) {
	for _, m := range r.memory {
		if m.at < from {
			before = max(before, m.rss)
		} else {
			after = max(after, m.rss)
		}
	}
	return before, after
}

// metric returns the value of series in a scrape of s's metrics, 0 when
// absent.
func metric(s *serve.Server, series string) float64 {
	var scrape bytes.Buffer
	s.WriteMetrics(&scrape)
	for _, line := range strings.Split(scrape.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// serveLoad runs clients against a server of the model for d: each client
// sends one [1,3,224,224] image as binary data after another and reads
// the binary output, on 127.0.0.1, over HTTP or, with overGRPC, over gRPC
// through serve/client, a connection per client (RESOURCE_EXHAUSTED
// counts as status 429).
func serveLoad(t *testing.T, model string, cfg serve.ModelConfig, clients int, d time.Duration, overGRPC bool) loadResult {
	cfg.Name, cfg.Path, cfg.Device = "resnet18", model, "cpu"
	s, err := serve.NewServer([]serve.ModelConfig{cfg}, serve.Options{Logger: serve.Quiet})
	require.NoError(t, err)
	defer s.Close()
	ts := httptest.NewServer(s.HTTPHandler(serve.HTTPOptions{}))
	defer ts.Close()
	ts.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = clients

	pixels := make([]byte, 4*3*224*224)
	for i := 0; i < len(pixels); i += 4 {
		binary.LittleEndian.PutUint32(pixels[i:], math.Float32bits(float32(i%251)/251-0.5))
	}
	var grpcPost func() (int, error)
	if overGRPC {
		grpcPost = grpcPoster(t, s, clients, pixels)
	}
	head := fmt.Sprintf(`{"inputs":[{"name":"input","shape":[1,3,224,224],"datatype":"FP32","parameters":{"binary_data_size":%d}}],"parameters":{"binary_data_output":true}}`, len(pixels))
	body := append([]byte(head), pixels...)
	post := func() (int, error) {
		if grpcPost != nil {
			return grpcPost()
		}
		req, _ := http.NewRequest("POST", ts.URL+"/v2/models/resnet18/infer", bytes.NewReader(body))
		req.Header.Set(serve.HeaderContentLength, strconv.Itoa(len(head)))
		resp, err := ts.Client().Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode == 200 && n < 4000 {
			err = fmt.Errorf("a response of %d bytes", n)
		}
		return resp.StatusCode, err
	}
	// Warm up: a model that does not batch plans its first Run here.
	for range 2 {
		_, err := post()
		require.NoError(t, err)
	}
	self := os.Getpid()
	// What the process holds once the model is loaded and warm: the heap
	// after a collection, and the RSS once the free heap went back to the
	// system (a previous phase's included).
	debug.FreeOSMemory()
	res := loadResult{statuses: map[int]int{}, rssStart: serve.RSSOf(self), liveStart: liveHeap(),
		plansBefore: metric(s, `onnxvk_plans_compiled_total{model="resnet18"}`)}
	var (
		mu    sync.Mutex
		lat   []time.Duration
		wg    sync.WaitGroup
		start = time.Now()
		end   = start.Add(d)
		done  = make(chan struct{})
		// sampled ends with the sampler.
		sampled sync.WaitGroup
	)
	sampled.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			m := memSample{at: time.Since(start), rss: serve.RSSOf(self), heap: int64(ms.HeapInuse), live: lastLive()}
			mu.Lock()
			res.memory = append(res.memory, m)
			res.rssPeak = max(res.rssPeak, m.rss)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000 && time.Now().Before(end); i++ {
				t0 := time.Now()
				status, err := post()
				mu.Lock()
				res.statuses[status]++
				switch {
				case err != nil:
					res.failures = append(res.failures, err.Error())
				case status == 200:
					res.ok++
					lat = append(lat, time.Since(t0))
				}
				mu.Unlock()
				if status == http.StatusTooManyRequests {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	sampled.Wait()
	res.elapsed = time.Since(start)
	res.rssEnd = serve.RSSOf(self)
	debug.FreeOSMemory()
	res.liveEnd = liveHeap()
	slices.Sort(lat)
	if len(lat) > 0 {
		res.p50, res.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	res.throughput = float64(res.ok) / res.elapsed.Seconds()
	res.runs = metric(s, `onnxvk_batch_size_count{model="resnet18"}`)
	res.mergedRequest = metric(s, `onnxvk_batch_size_sum{model="resnet18"}`)
	res.plansAfter = metric(s, `onnxvk_plans_compiled_total{model="resnet18"}`)
	// The server recovers: one more request is answered.
	status, err := post()
	require.NoError(t, err)
	require.Equal(t, 200, status, "after the load")
	return res
}

// flatHeapBound is how much more heap than before a 64-client phase of
// serveLoadResnet18 the process may hold after it, both after a
// collection: what the server keeps grows by no more across a run.
const flatHeapBound = 32 << 20

// TestServeLoadResnet18 is the serving load test of the long suites: 64
// clients for 30 s against resnet18 on the CPU with dynamic batching off
// and on (no errors; throughput, p50, p99, batch sizes and RSS logged,
// with the RSS and Go heap over time; the heap held after the load within
// flatHeapBound of the heap held before it, and no plan compiled after
// the model's warm-up), then 500 clients against a queue of 32 (the excess get 429,
// nothing else fails, the server recovers).
func TestServeLoadResnet18(t *testing.T) { serveLoadResnet18(t, false) }

// TestServeLoadResnet18GRPC is TestServeLoadResnet18 over gRPC, with
// serve/client: 64 clients, then 500, a connection each.
func TestServeLoadResnet18GRPC(t *testing.T) { serveLoadResnet18(t, true) }

func serveLoadResnet18(t *testing.T, overGRPC bool) {
	testenv.SkipLong(t)
	model := batchedResnet18(t)
	d := 30 * time.Second
	if v := os.Getenv("ONNXVK_SERVE_LOAD_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		d = time.Duration(n) * time.Second
	}
	mb := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	var thr [2]float64
	for i, batch := range []int{0, 8} {
		r := serveLoad(t, model, serve.ModelConfig{MaxBatchSize: batch, MaxQueueDelay: serve.Duration(5 * time.Millisecond), Instances: 2, QueueSize: 128}, 64, d, overGRPC)
		t.Logf("max_batch_size %d: 64 clients x %v (%v with the drain): %d answered, %d errors (%v), %.2f req/s, p50 %v, p99 %v, %.0f Runs for %.0f requests, plans compiled %.0f -> %.0f, RSS %s -> %s (peak %s)",
			batch, d, r.elapsed.Round(time.Second), r.ok, len(r.failures)+r.statuses[429], r.statuses, r.throughput, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond),
			r.runs, r.mergedRequest, r.plansBefore, r.plansAfter, mb(r.rssStart), mb(r.rssEnd), mb(r.rssPeak))
		step := max(len(r.memory)/8, 1)
		for j := 0; j < len(r.memory); j += step {
			m := r.memory[j]
			t.Logf("  at %5.1f s: RSS %s, Go heap in use %s, live at the last collection %s", m.at.Seconds(), mb(m.rss), mb(m.heap), mb(m.live))
		}
		half := r.elapsed / 2
		before, after := r.peaks(half)
		t.Logf("  RSS peak %s in the first %v, %s after; heap after a collection %s before the load, %s after it",
			mb(before), half.Round(time.Second), mb(after), mb(r.liveStart), mb(r.liveEnd))
		assert.Empty(t, r.failures)
		assert.Equal(t, r.ok, r.statuses[200], "statuses %v", r.statuses)
		assert.LessOrEqual(t, r.liveEnd, r.liveStart+flatHeapBound, "the heap held grew across the load")
		assert.Equal(t, r.plansBefore, r.plansAfter, "plans compiled during the load")
		thr[i] = r.throughput
	}
	t.Logf("throughput with batching over without: %.2fx", thr[1]/thr[0])

	r := serveLoad(t, model, serve.ModelConfig{MaxBatchSize: 8, MaxQueueDelay: serve.Duration(5 * time.Millisecond), Instances: 2, QueueSize: 32}, 500, d/3, overGRPC)
	t.Logf("overload: 500 clients x %v against a queue of 32: statuses %v, %d other failures, %.2f req/s, p50 %v, p99 %v, RSS %s -> %s (peak %s)",
		d/3, r.statuses, len(r.failures), r.throughput, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), mb(r.rssStart), mb(r.rssEnd), mb(r.rssPeak))
	assert.Empty(t, r.failures)
	assert.Positive(t, r.statuses[429])
	assert.Positive(t, r.statuses[200])
	assert.Equal(t, r.statuses[200]+r.statuses[429], sumStatuses(r.statuses))
}

func sumStatuses(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// grpcPoster serves s over gRPC on a loopback port for the test and
// returns a function that sends the image through serve/client on one of
// clients connections, taken in turn, as serveLoad's post does over HTTP.
func grpcPoster(t *testing.T, s *serve.Server, clients int, pixels []byte) func() (int, error) {
	f, err := serve.NewGRPC(s, "127.0.0.1:0", serve.GRPCOptions{})
	require.NoError(t, err)
	go f.Serve()
	t.Cleanup(func() { f.Shutdown(context.Background()) })
	conns := make(chan client.Client, clients)
	for range clients {
		c, err := client.New("grpc://"+f.Addr(), client.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		conns <- c
	}
	req := &serve.InferRequest{ModelName: "resnet18", Inputs: []serve.RequestTensor{{Name: "input", Datatype: "FP32", Shape: []int64{1, 3, 224, 224}, Raw: pixels}}}
	return func() (int, error) {
		c := <-conns
		defer func() { conns <- c }()
		resp, err := c.Infer(context.Background(), req)
		switch {
		case serve.CodeOf(err) == serve.CodeResourceExhausted:
			return http.StatusTooManyRequests, nil
		case err != nil:
			return 0, err
		case len(resp.Outputs) != 1 || len(resp.Outputs[0].Tensor.Bytes()) != 4000:
			return 0, fmt.Errorf("outputs %v", resp.Outputs)
		}
		return http.StatusOK, nil
	}
}
