//go:build unix

package hostfallback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestParallelForMappedFault: chunks that read a mapped file truncated
// under them fault on whichever goroutine runs them, a pool worker
// included, and the caller's graph.CatchFaults gets the error instead of
// the process dying of SIGBUS.
func TestParallelForMappedFault(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	page := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(path, make([]byte, 8*page), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, 8*page, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		testenv.Skip(t, fmt.Sprint("no mmap here: ", err))
	}
	defer syscall.Munmap(data)
	m := graph.RegisterMapping(data, path)
	defer m.Unregister()
	m.AddTensor("w", data)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var sink byte
	for range 20 {
		err := graph.CatchFaults(func() error {
			(*Threads)(nil).For(8, 1, func(lo, hi int) {
				// Slow chunks, so that the worker takes some.
				time.Sleep(time.Millisecond)
				for i := lo; i < hi; i++ {
					sink += data[i*page]
				}
			})
			return nil
		})
		if !errors.Is(err, graph.ErrMappedFileChanged) {
			t.Fatalf("error %v, want ErrMappedFileChanged", err)
		}
	}
}
