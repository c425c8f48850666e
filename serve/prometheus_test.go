package serve

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// prometheusBin is Debian's Prometheus server (package prometheus).
const prometheusBin = "/usr/bin/prometheus"

// TestPrometheusScrapes has a real Prometheus scrape /metrics every
// 200 ms after 5 requests (one malformed), and reads the counts back
// through its query API.
func TestPrometheusScrapes(t *testing.T) {
	// Most of its time is Prometheus starting and scraping: it waits
	// beside the other tests.
	t.Parallel()
	if _, err := os.Stat(prometheusBin); err != nil {
		testenv.Skip(t, "no Prometheus server (Debian's prometheus package): "+err.Error())
	}
	s := newTestServer(t, 0, 8)
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	t.Cleanup(ts.Close)
	for range 4 {
		status, b, _ := httpCall(t, "POST", ts.URL+"/v2/models/affine/infer", []byte(`{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}`), nil)
		require.Equal(t, 200, status, "%s", b)
	}
	status, _, _ := httpCall(t, "POST", ts.URL+"/v2/models/affine/infer", []byte(`{`), nil)
	require.Equal(t, 400, status)

	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	web := ln.Addr().String()
	ln.Close()
	config := fmt.Sprintf("global:\n  scrape_interval: 200ms\nscrape_configs:\n  - job_name: onnxvk\n    static_configs:\n      - targets: [%q]\n",
		strings.TrimPrefix(ts.URL, "http://"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644))
	var logs syncBuffer
	cmd := exec.Command(prometheusBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})

	query := func(q string) (string, bool) {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return "", false
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || len(r.Data.Result) != 1 {
			return "", false
		}
		v, _ := r.Data.Result[0].Value[1].(string)
		return v, true
	}
	want := map[string]string{
		`onnxvk_requests_total{model="affine",status="OK"}`:                 "4",
		`onnxvk_requests_total{model="affine",status="INVALID_ARGUMENT"}`:   "1",
		`onnxvk_request_duration_seconds_count{model="affine",status="OK"}`: "4",
		`onnxvk_batch_size_sum{model="affine"}`:                             "4",
		`onnxvk_queue_length{model="echo"}`:                                 "0",
		`up{job="onnxvk"}`:                                                  "1",
	}
	deadline := time.Now().Add(60 * time.Second)
	for q, v := range want {
		for {
			got, ok := query(q)
			if ok && got == v {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus: %s = %q (found: %v), want %s; its log:\n%s", q, got, ok, v, logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
