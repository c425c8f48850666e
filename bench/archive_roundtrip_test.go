package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader"
)

// TestArchiveRoundTrip converts every ONNX backend test model that passes on
// the CPU to a zip archive and back to protobuf, requires every tensor to
// come back byte-identical both ways, and runs the test's data sets on the
// archive with the same comparison as the conformance run. Outside the long
// suites every fourth model takes the round trip.
func TestArchiveRoundTrip(t *testing.T) {
	testenv.SkipShort(t, "converts and runs every backend test model")
	if _, err := os.Stat(onnxTestData); err != nil {
		testenv.Skip(t, "ONNX backend test data not installed (Debian libonnx-testdata): "+err.Error())
	}
	pass := readList(t, passList, false)
	var dirs []string
	passing := 0
	sampler := testenv.NewSampler(4)
	for _, suite := range conformanceSuites {
		found, err := FindConformanceTests(filepath.Join(onnxTestData, suite))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range found {
			if _, ok := pass[ConformanceTestName(d)]; ok {
				passing++
				if sampler.Take() {
					dirs = append(dirs, d)
				}
			}
		}
	}
	if passing < 1000 {
		t.Fatalf("only %d passing backend tests found", passing)
	}
	tmp := t.TempDir()
	jobs := make(chan int)
	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := roundTrip(dirs[i], filepath.Join(tmp, fmt.Sprint(i))); err != nil {
					mu.Lock()
					failures = append(failures, ConformanceTestName(dirs[i])+": "+err.Error())
					mu.Unlock()
				}
			}
		}()
	}
	for i := range dirs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	slices.Sort(failures)
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%d models converted to archives and back, %d failed", len(dirs), len(failures))
}

func roundTrip(dir, work string) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	orig, err := loader.Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return err
	}
	defer orig.Close()
	archive := filepath.Join(work, "model.onnx")
	if err := loader.SaveArchive(orig, archive); err != nil {
		return fmt.Errorf("to archive: %w", err)
	}
	fromArchive, err := loader.Load(archive)
	if err != nil {
		return fmt.Errorf("loading the archive: %w", err)
	}
	defer fromArchive.Close()
	if err := sameTensors(orig.Graph, fromArchive.Graph); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	back := filepath.Join(work, "back.onnx")
	if err := loader.Save(fromArchive, back); err != nil {
		return fmt.Errorf("back to protobuf: %w", err)
	}
	again, err := loader.Load(back)
	if err != nil {
		return fmt.Errorf("loading the protobuf written from the archive: %w", err)
	}
	defer again.Close()
	if err := sameTensors(orig.Graph, again.Graph); err != nil {
		return fmt.Errorf("back to protobuf: %w", err)
	}
	return runTest(context.Background(), &ConformanceResult{Dir: dir}, archive, "cpu", nil)
}

// sameTensors compares the initializers of two graphs, and of their
// subgraphs and tensor attributes, byte for byte.
func sameTensors(a, b *graph.Graph) error {
	if len(a.Initializers) != len(b.Initializers) {
		return fmt.Errorf("graph %q: %d initializers, then %d", a.Name, len(a.Initializers), len(b.Initializers))
	}
	for name, ta := range a.Initializers {
		if err := sameTensor(name, ta, b.Initializers[name]); err != nil {
			return err
		}
	}
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Errorf("graph %q: %d nodes, then %d", a.Name, len(a.Nodes), len(b.Nodes))
	}
	for i, na := range a.Nodes {
		for key, aa := range na.Attrs {
			ab := b.Nodes[i].Attrs[key]
			if ab == nil {
				return fmt.Errorf("%s: attribute %q lost", na, key)
			}
			if aa.T != nil {
				if err := sameTensor(na.Name+"."+key, aa.T, ab.T); err != nil {
					return err
				}
			}
			if aa.G != nil {
				if err := sameTensors(aa.G, ab.G); err != nil {
					return err
				}
			}
			for k, g := range aa.Graphs {
				if err := sameTensors(g, ab.Graphs[k]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func sameTensor(name string, a, b *graph.Tensor) error {
	switch {
	case b == nil:
		return fmt.Errorf("tensor %q lost", name)
	case a.DType != b.DType || !slices.Equal(a.Shape, b.Shape):
		return fmt.Errorf("tensor %q: %s%v became %s%v", name, a.DType, a.Shape, b.DType, b.Shape)
	case !bytes.Equal(a.Data, b.Data) || !slices.Equal(a.Strings, b.Strings):
		return fmt.Errorf("tensor %q: data differs", name)
	}
	return nil
}
