package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// httpCall sends a request and returns the status and the body.
func httpCall(t testing.TB, method, url string, body []byte, header map[string]string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b, resp.Header
}

// decode parses a JSON body.
func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}

func newHTTPTest(t testing.TB, s *Server, opts HTTPOptions) string {
	ts := httptest.NewServer(s.HTTPHandler(opts))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestHTTPHealthAndMetadata(t *testing.T) {
	s := newTestServer(t, 0, 8)
	url := newHTTPTest(t, s, HTTPOptions{})
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v2/health/live", 200}, {"GET", "/v2/health/ready", 200},
		{"GET", "/v2/models/affine/ready", 200}, {"GET", "/v2/models/affine/versions/1/ready", 200},
		{"GET", "/v2/models/affine/versions/7/ready", 404}, {"GET", "/v2/models/nope/ready", 404},
		{"GET", "/v2/models/nope", 404}, {"GET", "/v2/nothing", 404}, {"POST", "/v2/health/live", 404},
		{"POST", "/v2/models/nope/infer", 404},
	} {
		status, body, _ := httpCall(t, c.method, url+c.path, nil, nil)
		assert.Equal(t, c.status, status, "%s %s: %s", c.method, c.path, body)
		if status == 404 {
			assert.NotEmpty(t, decode(t, body)["error"], "%s", c.path)
		}
	}
	status, body, _ := httpCall(t, "GET", url+"/v2", nil, nil)
	require.Equal(t, 200, status)
	md := decode(t, body)
	assert.Equal(t, "onnxvk", md["name"])
	assert.Contains(t, md["extensions"], "binary_tensor_data")
	assert.NotEmpty(t, md["version"])

	for _, path := range []string{"/v2/models/affine", "/v2/models/affine/versions/1"} {
		status, body, _ = httpCall(t, "GET", url+path, nil, nil)
		require.Equal(t, 200, status)
		assert.JSONEq(t, `{"name":"affine","versions":["1"],"platform":"onnx",
			"inputs":[{"name":"x","datatype":"FP32","shape":[-1,4]}],
			"outputs":[{"name":"y","datatype":"FP32","shape":[-1,4]},{"name":"s","datatype":"FP32","shape":[-1,4]}]}`, string(body))
	}

	s.Drain()
	status, _, _ = httpCall(t, "GET", url+"/v2/health/ready", nil, nil)
	assert.Equal(t, 503, status)
	status, _, _ = httpCall(t, "GET", url+"/v2/health/live", nil, nil)
	assert.Equal(t, 200, status)
	status, _, _ = httpCall(t, "GET", url+"/v2/models/affine/ready", nil, nil)
	assert.Equal(t, 503, status)
}

func TestHTTPInferJSON(t *testing.T) {
	s := newTestServer(t, 0, 8)
	url := newHTTPTest(t, s, HTTPOptions{})
	body := `{"id":"req-7","inputs":[{"name":"x","shape":[2,4],"datatype":"FP32","data":[[1,2,3,4],[0.5,-1,0,2]]}]}`
	status, b, hdr := httpCall(t, "POST", url+"/v2/models/affine/infer", []byte(body), nil)
	require.Equal(t, 200, status, "%s", b)
	assert.Equal(t, "application/json", hdr.Get("Content-Type"))
	assert.JSONEq(t, `{"model_name":"affine","model_version":"1","id":"req-7","outputs":[
		{"name":"y","datatype":"FP32","shape":[2,4],"data":[2,5,10,17,1.5,-1,1,9]},
		{"name":"s","datatype":"FP32","shape":[2,4],"data":[2,4,6,8,1,-2,0,4]}]}`, string(b))

	// A requested output; the version in the path.
	body = `{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,1,1,1]}],"outputs":[{"name":"s"}]}`
	status, b, _ = httpCall(t, "POST", url+"/v2/models/affine/versions/1/infer", []byte(body), nil)
	require.Equal(t, 200, status, "%s", b)
	assert.JSONEq(t, `{"model_name":"affine","model_version":"1","outputs":[{"name":"s","datatype":"FP32","shape":[1,4],"data":[2,2,2,2]}]}`, string(b))
}

// echoValues are values of every datatype that JSON carries exactly, with
// their JSON text.
var echoValues = map[string]string{
	"BOOL": `[true,false]`, "UINT8": `[0,255]`, "UINT16": `[1,65535]`, "UINT32": `[2,4294967295]`,
	"UINT64": `[3,18446744073709551615]`, "INT8": `[-128,127]`, "INT16": `[-32768,32767]`,
	"INT32": `[-2147483648,2147483647]`, "INT64": `[-9223372036854775808,9223372036854775807]`,
	"FP16": `[0.5,-65504]`, "FP32": `[0.1,-3.4028235e+38]`, "FP64": `[0.1,5e-324]`,
	"BYTES": `["héllo","\u003ctag\u003e \"q\""]`, "BF16": `[1.5,-256]`,
}

func echoRequest(binaryIn bool, outputs string) ([]byte, map[string]string) {
	var ins []string
	var bin []byte
	for _, dt := range allDatatypes {
		if !binaryIn {
			ins = append(ins, fmt.Sprintf(`{"name":"in_%s","shape":[1,2],"datatype":"%s","data":%s}`, dt, dt, echoValues[dt]))
			continue
		}
		rt := RequestTensor{Name: "in_" + dt, Datatype: dt, Shape: []int64{1, 2}}
		dtv, _ := DType(dt)
		data, err := parseData(json.RawMessage(echoValues[dt]), dtv)
		if err != nil {
			panic(err)
		}
		rt.Data = data
		tensor, err := rt.Tensor()
		if err != nil {
			panic(err)
		}
		out, _ := NewResponseTensor(rt.Name, tensor, nil)
		raw := out.Raw()
		bin = append(bin, raw...)
		ins = append(ins, fmt.Sprintf(`{"name":"in_%s","shape":[1,2],"datatype":"%s","parameters":{"binary_data_size":%d}}`, dt, dt, len(raw)))
	}
	head := `{"inputs":[` + strings.Join(ins, ",") + `]` + outputs + `}`
	if !binaryIn {
		return []byte(head), nil
	}
	return append([]byte(head), bin...), map[string]string{HeaderContentLength: strconv.Itoa(len(head))}
}

// TestHTTPDatatypes sends every datatype as JSON and as binary data and
// reads each back as JSON and as binary data.
func TestHTTPDatatypes(t *testing.T) {
	s := newTestServer(t, 0, 8)
	url := newHTTPTest(t, s, HTTPOptions{})
	for _, binaryIn := range []bool{false, true} {
		for _, binaryOut := range []bool{false, true} {
			extra := ""
			if binaryOut {
				extra = `,"parameters":{"binary_data_output":true}`
			}
			body, hdr := echoRequest(binaryIn, extra)
			status, b, rh := httpCall(t, "POST", url+"/v2/models/echo/infer", body, hdr)
			require.Equal(t, 200, status, "%s", b)
			head := b
			var bin []byte
			if binaryOut {
				n, err := strconv.Atoi(rh.Get(HeaderContentLength))
				require.NoError(t, err)
				head, bin = b[:n], b[n:]
			} else {
				assert.Empty(t, rh.Get(HeaderContentLength))
			}
			var resp struct {
				Outputs []struct {
					Name, Datatype string
					Shape          []int64
					Data           json.RawMessage
					Parameters     map[string]int
				}
			}
			require.NoError(t, json.Unmarshal(head, &resp))
			require.Len(t, resp.Outputs, len(allDatatypes))
			for i, dt := range allDatatypes {
				o := resp.Outputs[i]
				assert.Equal(t, "out_"+dt, o.Name)
				assert.Equal(t, dt, o.Datatype)
				assert.Equal(t, []int64{1, 2}, o.Shape)
				dtv, _ := DType(dt)
				want, err := parseData(json.RawMessage(echoValues[dt]), dtv)
				require.NoError(t, err)
				if binaryOut {
					size := o.Parameters["binary_data_size"]
					back, err := (&RequestTensor{Datatype: dt, Shape: o.Shape, Raw: bin[:size]}).Tensor()
					require.NoError(t, err, dt)
					bin = bin[size:]
					rt, _ := NewResponseTensor("", back, nil)
					wantT, _ := (&RequestTensor{Datatype: dt, Shape: o.Shape, Data: want}).Tensor()
					wt, _ := NewResponseTensor("", wantT, nil)
					assert.Equal(t, wt.Values(), rt.Values(), dt)
					continue
				}
				got, err := parseData(o.Data, dtv)
				require.NoError(t, err, "%s: %s", dt, o.Data)
				assert.Equal(t, want, got, "%s in=%v: %s", dt, binaryIn, o.Data)
			}
			assert.Empty(t, bin)
		}
	}

	// One output in binary, asked per output.
	body, _ := echoRequest(false, `,"outputs":[{"name":"out_FP32","parameters":{"binary_data":true}},{"name":"out_INT8"}]`)
	status, b, rh := httpCall(t, "POST", url+"/v2/models/echo/infer", body, nil)
	require.Equal(t, 200, status, "%s", b)
	n, err := strconv.Atoi(rh.Get(HeaderContentLength))
	require.NoError(t, err)
	assert.Contains(t, string(b[:n]), `{"name":"out_FP32","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}`)
	assert.Contains(t, string(b[:n]), `{"name":"out_INT8","datatype":"INT8","shape":[1,2],"data":[-128,127]}`)
	require.Len(t, b[n:], 8)
	assert.Equal(t, float32(0.1), math.Float32frombits(binary.LittleEndian.Uint32(b[n:])))
}

func TestHTTPErrors(t *testing.T) {
	s := newTestServer(t, 0, 8)
	url := newHTTPTest(t, s, HTTPOptions{MaxRequestBytes: 4096})
	ok := `{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}`
	binHead := `{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","parameters":{"binary_data_size":16}}]}`
	for _, c := range []struct {
		body   string
		header map[string]string
		status int
		msg    string
	}{
		{`{"inputs":[`, nil, 400, "malformed JSON"},
		{`not json`, nil, 400, "malformed JSON"},
		{`{"inputs":[]}`, nil, 400, "no inputs"},
		{`{"inputs":[{"name":"x","shape":[1,4],"datatype":"INT64","data":[1,2,3,4]}]}`, nil, 400, "datatype INT64"},
		{`{"inputs":[{"name":"x","shape":[1,5],"datatype":"FP32","data":[1,2,3,4,5]}]}`, nil, 400, "dimension 1 is 4"},
		{`{"inputs":[{"name":"x","shape":[4],"datatype":"FP32","data":[1,2,3,4]}]}`, nil, 400, "rank 2"},
		{`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3]}]}`, nil, 400, "3 values"},
		{`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,"a",4]}]}`, nil, 400, "numbers"},
		{`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,null,4]}]}`, nil, 400, "not a float"},
		{`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32"}]}`, nil, 400, "no data"},
		{`{"inputs":[{"name":"x","datatype":"FP32","data":[1]}]}`, nil, 400, "no shape"},
		{`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP9","data":[1,2,3,4]}]}`, nil, 400, "unknown datatype"},
		{`{"inputs":[` + ok + `,` + ok + `]}`, nil, 400, "twice"},
		{`{"inputs":[{"name":"x","shape":[9,4],"datatype":"FP32","data":[` + strings.Repeat("1,", 35) + `1]}]}`, nil, 400, "a batch of 9 rows (the inputs' first dimension) is over the model's max_batch_size of 8"},
		{`{"inputs":[` + ok + `],"outputs":[{"name":"q"}]}`, nil, 400, `no output "q"`},
		{`{"inputs":[` + ok + `],"parameters":{"binary_data_output":3}}`, nil, 400, "must be a bool"},
		{binHead + "abcd", map[string]string{HeaderContentLength: strconv.Itoa(len(binHead))}, 400, "4 bytes of binary data remain"},
		{`{"inputs":[` + ok + `]}xxxx`, map[string]string{HeaderContentLength: strconv.Itoa(len(ok) + 13)}, 400, "4 bytes of binary data after"},
		{`{"inputs":[` + ok + `]}`, map[string]string{HeaderContentLength: "9999"}, 400, "not a length"},
		{`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[` + strings.Repeat("1,", 3000) + `1]}]}`, nil, 413, "larger than the limit of 4096"},
	} {
		status, b, _ := httpCall(t, "POST", url+"/v2/models/affine/infer", []byte(c.body), c.header)
		assert.Equal(t, c.status, status, "%.80s: %s", c.body, b)
		assert.Contains(t, decode(t, b)["error"], c.msg, "%.80s", c.body)
	}
	// The errors are counted by status, under the model's name.
	_, b, _ := httpCall(t, "GET", url+"/metrics", nil, nil)
	assert.Regexp(t, `onnxvk_requests_total\{model="affine",status="INVALID_ARGUMENT"\} 19\n`, string(b))
}

func TestHTTPRepository(t *testing.T) {
	s := newTestServer(t, 0, 8)
	url := newHTTPTest(t, s, HTTPOptions{})
	index := func() string {
		status, b, _ := httpCall(t, "POST", url+"/v2/repository/index", nil, nil)
		require.Equal(t, 200, status)
		return string(b)
	}
	assert.JSONEq(t, `[{"name":"affine","version":"1","state":"READY"},{"name":"echo","version":"1","state":"READY"}]`, index())
	status, b, _ := httpCall(t, "POST", url+"/v2/repository/models/affine/unload", []byte(`{}`), nil)
	require.Equal(t, 200, status, "%s", b)
	assert.JSONEq(t, `[{"name":"affine","version":"1","state":"UNAVAILABLE","reason":"unloaded"},{"name":"echo","version":"1","state":"READY"}]`, index())
	status, b, _ = httpCall(t, "POST", url+"/v2/repository/index", []byte(`{"ready":true}`), nil)
	require.Equal(t, 200, status)
	assert.JSONEq(t, `[{"name":"echo","version":"1","state":"READY"}]`, string(b))
	status, b, _ = httpCall(t, "POST", url+"/v2/models/affine/infer", []byte(`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}`), nil)
	assert.Equal(t, 404, status)
	assert.Contains(t, decode(t, b)["error"], "not loaded")
	status, _, _ = httpCall(t, "POST", url+"/v2/repository/models/affine/load", nil, nil)
	require.Equal(t, 200, status)
	status, b, _ = httpCall(t, "POST", url+"/v2/models/affine/infer", []byte(`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}`), nil)
	assert.Equal(t, 200, status, "%s", b)
	status, _, _ = httpCall(t, "POST", url+"/v2/repository/models/nope/load", nil, nil)
	assert.Equal(t, 404, status)
}

// metricValue reads one sample of a scrape.
func metricValue(t testing.TB, scrape, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(scrape)
	require.NotNil(t, m, "no %s in\n%s", series, scrape)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// TestHTTPBatching sends 32 concurrent single-row requests to a model
// batching up to 8 rows within 200 ms: the scrape shows fewer Runs than
// requests, and every response equals the Go computation of its row.
func TestHTTPBatching(t *testing.T) {
	s := newTestServer(t, 200*time.Millisecond, 64)
	url := newHTTPTest(t, s, HTTPOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := []float32{float32(i), float32(-i) / 4, 1, 0.5}
			body := fmt.Sprintf(`{"id":"%d","inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[%g,%g,%g,%g]}],"outputs":[{"name":"y"}]}`, i, row[0], row[1], row[2], row[3])
			req, _ := http.NewRequest("POST", url+"/v2/models/affine/infer", strings.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var out struct {
				ID      string
				Outputs []struct{ Data []float32 }
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
				errs <- fmt.Errorf("status %d: %v", resp.StatusCode, err)
				return
			}
			if want := affineWant([][]float32{row}); out.ID != fmt.Sprint(i) || !assert.ObjectsAreEqual(want, out.Outputs[0].Data) {
				errs <- fmt.Errorf("request %d: got %s %v, want %v", i, out.ID, out.Outputs[0].Data, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, b, hdr := httpCall(t, "GET", url+"/metrics", nil, nil)
	assert.Contains(t, hdr.Get("Content-Type"), "version=0.0.4")
	scrape := string(b)
	runs := metricValue(t, scrape, `onnxvk_batch_size_count{model="affine"}`)
	assert.Equal(t, 32.0, metricValue(t, scrape, `onnxvk_batch_size_sum{model="affine"}`))
	assert.LessOrEqual(t, runs, 16.0, "32 requests took %v Runs", runs)
	assert.Less(t, metricValue(t, scrape, `onnxvk_batch_size_bucket{model="affine",le="1"}`), runs, "no Run merged requests")
	assert.Equal(t, 32.0, metricValue(t, scrape, `onnxvk_requests_total{model="affine",status="OK"}`))
	assert.Equal(t, 0.0, metricValue(t, scrape, `onnxvk_inflight_requests{model="affine"}`))
	assert.Equal(t, 0.0, metricValue(t, scrape, `onnxvk_queue_length{model="affine"}`))
}

// TestHTTPOverload sends 64 concurrent requests to a slow model whose
// queue holds 4: the excess get 429 with an error body, the queue never
// holds more than 4, and the server answers normally afterwards.
func TestHTTPOverload(t *testing.T) {
	dir := t.TempDir()
	s, err := NewServer([]ModelConfig{{Name: "slow", Path: saveModel(t, dir, slowModel()), Device: "cpu", QueueSize: 4}}, Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	url := newHTTPTest(t, s, HTTPOptions{})
	body := fmt.Sprintf(`{"inputs":[{"name":"x","shape":[1,512],"datatype":"FP32","data":[%s1]}]}`, strings.Repeat("0.5,", 511))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	stop := make(chan struct{})
	maxQueued := make(chan int64)
	go func() {
		var most int64
		for {
			select {
			case <-stop:
				maxQueued <- most
				return
			default:
			}
			most = max(most, s.models["slow"].queued.Load())
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, b, _ := httpCall(t, "POST", url+"/v2/models/slow/infer", []byte(body), nil)
			if status == 429 {
				assert.Contains(t, decode(t, b)["error"], "queue of 4 requests is full")
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	maxQueue := <-maxQueued
	assert.Equal(t, 64, statuses[200]+statuses[429], "statuses %v", statuses)
	assert.Positive(t, statuses[429], "statuses %v", statuses)
	assert.Positive(t, statuses[200], "statuses %v", statuses)
	assert.LessOrEqual(t, maxQueue, int64(4))
	status, b, _ := httpCall(t, "POST", url+"/v2/models/slow/infer", []byte(body), nil)
	assert.Equal(t, 200, status, "after the overload: %s", b)
}

func TestHTTPTimeoutParameter(t *testing.T) {
	s := newTestServer(t, time.Second, 8)
	url := newHTTPTest(t, s, HTTPOptions{})
	body := `{"parameters":{"timeout":20000},"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}`
	status, b, _ := httpCall(t, "POST", url+"/v2/models/affine/infer", []byte(body), nil)
	assert.Equal(t, 504, status, "%s", b)
	assert.Contains(t, decode(t, b)["error"], "deadline")
}
