//go:build unix

package loader

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestExternalDataFIFO loads a model whose external data location is a
// FIFO with no writer: Load fails at once instead of blocking in open.
func TestExternalDataFIFO(t *testing.T) {
	dir, _ := externalFixture(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.bin"), 0o644); err != nil {
		testenv.Skip(t, fmt.Sprint("no FIFO here: ", err))
	}
	path := filepath.Join(dir, "m.onnx")
	writeModelPB(t, path, identityModelPB(externalPB("fifo", graph.Float, []int64{1}, "fifo.bin", 0, 4, "")))
	done := make(chan error, 1)
	go func() {
		m, err := Load(path)
		if err == nil {
			m.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrExternalData) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("error %v: want ErrExternalData saying not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
