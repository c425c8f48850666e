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

// TestLoadFIFO loads a model path that is a FIFO with no writer: Load
// fails at once, naming the path, instead of blocking in open.
func TestLoadFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		testenv.Skip(t, fmt.Sprint("no FIFO here: ", err))
	}
	err := loadWithin(t, path)
	if err == nil || !strings.Contains(err.Error(), path+": not a regular file") {
		t.Errorf("error %v: want one saying %s is not a regular file", err, path)
	}
}

// TestLoadDevZero: a device is refused before anything is read from it
// (/dev/zero would be read until memory runs out).
func TestLoadDevZero(t *testing.T) {
	if err := loadWithin(t, "/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
		t.Errorf("error %v: want one saying /dev/zero is not a regular file", err)
	}
	if _, err := ReadValueFile("/dev/zero", nil); err == nil || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
		t.Errorf("ReadValueFile: error %v: want one saying /dev/zero is not a regular file", err)
	}
}

// loadWithin loads path and returns Load's error, failing the test if Load
// takes 10 seconds.
func loadWithin(t *testing.T, path string) error {
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
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%s) blocked", path)
		return nil
	}
}

// TestExternalDataFIFO loads a model whose external data location is a
// FIFO with no writer: Load fails at once instead of blocking in open.
func TestExternalDataFIFO(t *testing.T) {
	dir, _ := externalFixture(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.bin"), 0o644); err != nil {
		testenv.Skip(t, fmt.Sprint("no FIFO here: ", err))
	}
	path := filepath.Join(dir, "m.onnx")
	writeModelPB(t, path, identityModelPB(externalPB("fifo", graph.Float, []int64{1}, "fifo.bin", 0, 4, "")))
	if err := loadWithin(t, path); !errors.Is(err, ErrExternalData) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("error %v: want ErrExternalData saying not a regular file", err)
	}
}
