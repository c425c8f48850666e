// Package torchmodels gives tests the models testdata/torch/export.py
// exports from PyTorch with seeded weights, exported once into a cache.
package torchmodels

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// Defaults are the models testdata/torch/export.py exports by default.
var Defaults = []string{"resnet18", "mobilenet_v2", "squeezenet1_1", "densenet_small", "transformer"}

// python is the interpreter with PyTorch and torchvision (Debian's
// python3-torch and python3-torchvision).
const python = "/usr/bin/python3"

// script is the export script's path from the module's root; see its
// documentation.
var script = filepath.Join("testdata", "torch", "export.py")

// Cache returns the folder the models exported by the current export
// script (root is the module's root folder) are kept in: a subfolder
// named after a hash of the script, in $ONNXVK_MODEL_CACHE or else in
// onnxvk/torch-models in the user's cache folder. Editing the script
// therefore leads to a fresh export.
func Cache(t testing.TB, root string) string {
	src, err := os.ReadFile(filepath.Join(root, script))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	version := hex.EncodeToString(sum[:6])
	if dir := os.Getenv("ONNXVK_MODEL_CACHE"); dir != "" {
		return filepath.Join(dir, version)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		testenv.Skip(t, fmt.Sprint("no cache folder for the exported models (set ONNXVK_MODEL_CACHE): ", err))
	}
	return filepath.Join(dir, "onnxvk", "torch-models", version)
}

// files lists the files of an exported model: the model and
// PyTorch's reference (a decoder's is a prompt and its greedy
// continuation).
func files(name string) []string {
	if strings.HasPrefix(name, "decoder") {
		return []string{"model.onnx", "prompt.npy", "tokens.npy", "logits.npy"}
	}
	return []string{"model.onnx", "input.npy", "output.npy"}
}

// noTorch matches Python's error for a missing module the export script
// imports: numpy, onnx, torch or torchvision.
var noTorch = regexp.MustCompile(`No module named '(numpy|onnx|torch|torchvision)'`)

// exporting serializes Export, and wanted holds the names Want declared.
var (
	exporting sync.Mutex
	wanted    []string
)

// Want declares models that the test binary's default tests export: the
// first Export that has to start the export script exports the missing
// ones among them too, in the same run, as each start of PyTorch costs
// seconds. It returns true, for a package-level blank variable.
func Want(names ...string) bool {
	exporting.Lock()
	defer exporting.Unlock()
	wanted = append(wanted, names...)
	return true
}

// missingIn returns the names of names not exported into cache.
func missingIn(cache string, names []string) []string {
	var missing []string
	for _, name := range names {
		for _, f := range files(name) {
			if _, err := os.Stat(filepath.Join(cache, name, f)); err != nil {
				missing = append(missing, name)
				break
			}
		}
	}
	return missing
}

// Export makes sure every named model has been exported into cache,
// running the export script (root is the module's root folder) for the
// missing ones only, with the missing ones Want declared; it skips
// (testenv.Skip) where PyTorch is missing.
func Export(t testing.TB, root, cache string, names []string) {
	exporting.Lock()
	defer exporting.Unlock()
	if len(missingIn(cache, names)) == 0 {
		return
	}
	missing := missingIn(cache, slices.Compact(slices.Sorted(slices.Values(slices.Concat(names, wanted)))))
	start := time.Now()
	args := append([]string{filepath.Join(root, script), "--out", cache}, missing...)
	out, err := exec.Command(python, args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && (!errors.As(err, &exit) || noTorch.Match(out)):
		// No interpreter, or one without PyTorch: found from the export's
		// own failure rather than a separate probe, which would import
		// torch a second time.
		testenv.Skip(t, fmt.Sprintf("models %v are not exported in %s and %s cannot export them (needs python3-torch, python3-torchvision, python3-numpy and python3-onnx): %v\n%s",
			missing, cache, python, err, out))
	case err != nil:
		t.Fatalf("exporting %v: %v\n%s", missing, err, out)
	}
	t.Logf("exported %v into %s in %v", missing, cache, time.Since(start).Round(time.Millisecond))
}
