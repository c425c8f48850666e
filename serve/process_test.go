package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// built is cmd/onnxvk as buildCommand built it, once for the test binary:
// its folder (removed by TestMain), path and build error.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// TestMain runs the tests and removes the command they built.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildCommand returns cmd/onnxvk built into a temporary folder, the first
// call building it for all.
func buildCommand(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, "no go command to build cmd/onnxvk: "+err.Error())
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "onnxvk-serve-test"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "onnxvk")
		if out, err := exec.Command(goTool, "build", "-o", built.bin, "../cmd/onnxvk").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ../cmd/onnxvk: %v\n%s", err, out)
		}
	})
	require.NoError(t, built.err)
	return built.bin
}

// startServe starts `onnxvk serve ARGS` and returns the process, its
// base URL and its stderr so far (filled as it runs).
func startServe(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd, addrs, stderr := startServeAddrs(t, bin, "HTTP", args...)
	return cmd, "http://" + addrs["HTTP"], stderr
}

// startServeAddrs starts `onnxvk serve --http 127.0.0.1:0 ARGS` and
// returns the process, the address of each frontend it announced by the
// time it announced the one named last ("HTTP", "gRPC"), and its stderr
// so far (filled as it runs).
func startServeAddrs(t *testing.T, bin, last string, args ...string) (*exec.Cmd, map[string]string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	ready := make(chan map[string]string, 1)
	go func() {
		addrs := map[string]string{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "serving "); ok {
				if frontend, addr, ok := strings.Cut(rest, " on "); ok {
					addrs[frontend] = addr
					if frontend == last {
						ready <- maps.Clone(addrs)
					}
				}
			}
		}
	}()
	select {
	case addrs := <-ready:
		return cmd, addrs, stderr
	case <-time.After(60 * time.Second):
		t.Fatalf("onnxvk serve did not start in 60 s: %s", stderr.String())
	}
	return nil, nil, nil
}

// rssOf returns the resident memory of process pid, 0 where
// /proc/PID/status is not there to tell.
func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeSIGTERMDrains runs `onnxvk serve` under load from 12 clients
// (each on new connections, at most 100 requests, 20 s) and sends it
// SIGTERM: every request the server accepted gets its full response (200,
// or 503 for one that arrived after the signal, before the port closed;
// the server's count of answered requests equals the clients'), later
// ones find the port closed, some responses arrive after the
// signal (so requests were in flight), and the process exits 0 within
// the drain timeout.
func TestServeSIGTERMDrains(t *testing.T) {
	testenv.SkipShort(t, "builds cmd/onnxvk and runs it under load")
	// The load runs in another process, for seconds: beside the other
	// tests.
	t.Parallel()
	bin := buildCommand(t)
	model := saveModel(t, t.TempDir(), slowModel())
	cmd, url, stderr := startServe(t, bin, "--device", "cpu", "--queue", "64", "--drain-timeout", "20s", model)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	body := fmt.Sprintf(`{"inputs":[{"name":"x","shape":[1,512],"datatype":"FP32","data":[%s1]}]}`, strings.Repeat("0.25,", 511))
	var (
		wg                     sync.WaitGroup
		mu                     sync.Mutex
		ok, refused, afterTerm int
		unavailable            int
		failures               []string
		sigterm                time.Time
		stop                   = time.Now().Add(20 * time.Second)
		firstOK                = make(chan struct{})
		firstOnce              sync.Once
	)
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if time.Now().After(stop) {
					return
				}
				resp, err := client.Post(url+"/v2/models/slow/infer", "application/json", strings.NewReader(body))
				mu.Lock()
				switch {
				case err != nil && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)):
					// The port closed (refused), or it closed while the
					// connection waited in the listen backlog, never
					// accepted (reset, or closed before any response):
					// the server's count of answered requests below
					// tells that apart from a request it took and
					// dropped.
					refused++
					mu.Unlock()
					return
				case err != nil:
					failures = append(failures, err.Error())
				default:
					var b strings.Builder
					_, rerr := bufio.NewReader(resp.Body).WriteTo(&b)
					resp.Body.Close()
					switch {
					case rerr == nil && resp.StatusCode == http.StatusServiceUnavailable && !sigterm.IsZero() && strings.Contains(b.String(), "shutting down"):
						// Accepted after the signal, before the port
						// closed: an error response, as draining gives.
						unavailable++
					case rerr != nil || resp.StatusCode != 200 || !strings.Contains(b.String(), `"outputs"`):
						failures = append(failures, fmt.Sprintf("status %d, %v: %.100s", resp.StatusCode, rerr, b.String()))
					default:
						ok++
						if !sigterm.IsZero() {
							afterTerm++
						}
						firstOnce.Do(func() { close(firstOK) })
					}
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-firstOK:
	case <-time.After(20 * time.Second):
		t.Fatalf("no response in 20 s: %s", stderr.String())
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	sigterm = time.Now()
	mu.Unlock()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	exited := time.Since(sigterm)
	wg.Wait()
	require.NoError(t, err, "exit status; stderr:\n%s", stderr.String())
	assert.Less(t, exited, 20*time.Second)
	assert.Empty(t, failures)
	assert.Positive(t, afterTerm, "no request was in flight at SIGTERM (%d answered, %d refused)", ok, refused)
	assert.Contains(t, stderr.String(), "every accepted request was answered")
	assert.Contains(t, stderr.String(), fmt.Sprintf("requests=%d ok=%d", ok+unavailable, ok), "the server answered as many requests as the clients got")
	t.Logf("%d requests answered (%d after SIGTERM), %d answered 503 while draining, %d refused after; exit %v after the signal", ok, afterTerm, unavailable, refused, exited.Round(time.Millisecond))
}
