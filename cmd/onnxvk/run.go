package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/example"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/x448/float16"
)

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "run [MODEL] [-i NAME=FILE]... [-o DIR] [--device auto|cpu|vulkan] [--config NAME] [--devices LIST] [--fp16] [--threads N] [--seed N] [--verify] [--profile FILE [--batch N]]", stdout)
	var inputs, dimList listFlag
	fs.Var(&inputs, "i", "input `NAME=FILE` (.npy, TensorProto .pb, or a picture: .png, .jpg, .gif); repeatable")
	img := addImageFlags(fs)
	labels := fs.String("labels", "", "class names, one per line, for the top 5 classes printed for an output of class scores, from `FILE`")
	outDir := fs.String("o", "", "write each output to `DIR`/<output name>.npy")
	device := fs.String("device", "auto", "device: auto, cpu, vulkan or vulkan:N")
	multi := addMultiDeviceFlags(fs)
	fp16 := addFP16Flag(fs)
	hostMem := addHostMemoryFlag(fs)
	threads := addThreadsFlag(fs)
	seed := fs.Uint64("seed", 1, "seed for the random data of inputs not given")
	fs.Var(&dimList, "dim", "size of a symbolic dimension for random inputs, `NAME=SIZE`; repeatable (default 1)")
	verify := fs.Bool("verify", false, "also run every node placed on the GPU alone on the CPU's values of its inputs, and report the first whose outputs differ beyond the op's tolerance")
	profile := fs.String("profile", "", "after the run, time a second one step by step and write a Chrome trace (Perfetto, chrome://tracing) to `FILE`")
	batch := fs.Int("batch", 1, "with --profile, time `N` requests of the same inputs pipelined through the pipeline stages (Session.RunBatch) and print how much the logical devices overlap")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	threadOpts, err := threads.options()
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		if len(inputs) > 0 {
			return usagef("-i needs a MODEL; the built-in example takes its own picture")
		}
		var other []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "device" && f.Name != "o" && f.Name != "threads" {
				other = append(other, "--"+f.Name)
			}
		})
		if len(other) > 0 {
			return usagef("%s needs a MODEL: the built-in example takes only --device, --threads and -o", strings.Join(other, ", "))
		}
		return runExample(*device, threadOpts, *outDir, stdout)
	}
	path, err := oneModel(pos)
	if err != nil {
		return err
	}
	dims, err := parseDims(dimList)
	if err != nil {
		return err
	}
	memOpts, restoreGC, err := hostMem.options()
	if err != nil {
		return err
	}
	defer restoreGC()
	opts := append(append(append(append([]onnxvk.Option{onnxvk.WithDevice(*device)}, multi.options()...), fp16Options(*fp16)...), memOpts...), threadOpts...)
	sess, err := onnxvk.Load(path, opts...)
	if err != nil {
		return err
	}
	defer sess.Close()
	printMultiDevice(stdout, sess)
	printPrecision(stdout, sess, *fp16)
	feeds, err := makeInputs(sess, inputs, img, dims, *seed, stdout)
	if err != nil {
		return err
	}
	start := time.Now()
	out, err := sessionvalues.Of(sess).RunValues(context.Background(), feeds)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "ran %s on %s in %s\n", filepath.Base(path), sess.Device(), elapsed.Round(time.Microsecond))
	names, err := readLabels(*labels)
	if err != nil {
		return err
	}
	var outNames []string
	for _, o := range sess.Outputs() {
		outNames = append(outNames, o.Name)
	}
	files := outputFiles(outNames)
	for _, o := range sess.Outputs() {
		v := out[o.Name]
		fmt.Fprintf(stdout, "output %s: %s\n", o.Name, summarize(v))
		if t, ok := v.(*graph.Tensor); ok {
			printTopK(stdout, t, names)
		}
		if *outDir == "" {
			continue
		}
		t, ok := v.(*graph.Tensor)
		if !ok {
			fmt.Fprintf(stdout, "  not written: %s is not a tensor\n", o.Name)
			continue
		}
		file, err := writeOutput(*outDir, files[o.Name], t)
		if err != nil {
			return fmt.Errorf("output %q: %w", o.Name, err)
		}
		fmt.Fprintf(stdout, "  wrote output %q to %s\n", o.Name, file)
	}
	if *batch < 1 {
		return usagef("--batch %d: want at least 1", *batch)
	}
	if *profile != "" {
		if err := profileRun(sess, feeds, *batch, *profile, stdout); err != nil {
			return err
		}
	}
	if *verify {
		return verifyRun(sess, feeds, stdout)
	}
	return nil
}

// profileRun runs the model once more under a trace (the first run also
// planned and compiled it), or batch requests of feeds pipelined with
// RunValuesBatch when batch > 1, writes the trace to file as Chrome trace
// JSON with one track per logical device, and prints the time per track,
// the ops that took longest and, for a batch, the overlap of the tracks
// (backend.Overlap).
func profileRun(sess *onnxvk.Session, feeds map[string]graph.Value, batch int, file string, stdout io.Writer) error {
	tr := backend.NewTrace()
	ctx := backend.WithTrace(context.Background(), tr)
	if batch == 1 {
		if _, err := sessionvalues.Of(sess).RunValues(ctx, feeds); err != nil {
			return err
		}
	} else {
		requests := make([]map[string]graph.Value, batch)
		for i := range requests {
			requests[i] = feeds
		}
		if _, err := sessionvalues.Of(sess).RunValuesBatch(ctx, requests); err != nil {
			return err
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := tr.WriteChrome(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if batch == 1 {
		fmt.Fprintf(stdout, "profile of a second run written to %s\n", file)
	} else {
		fmt.Fprintf(stdout, "profile of %d pipelined requests written to %s: the devices overlap %.1f%% of the busy time\n",
			batch, file, 100*backend.Overlap(tr.Events()))
	}
	printOpTimes(stdout, opTimes(tr.Events()), 12)
	return nil
}

// verifyRun checks every node the session puts on another device than the
// CPU against the CPU kernel (Session.Verify) and reports the first that
// differs beyond its op's tolerance, or the largest error when none does.
func verifyRun(sess *onnxvk.Session, feeds map[string]graph.Value, stdout io.Writer) error {
	inputs := make(map[string]*onnxvk.Tensor, len(feeds))
	for name, v := range feeds {
		t, ok := v.(*graph.Tensor)
		if !ok {
			return fmt.Errorf("--verify: input %q is a %s; verification takes tensors only", name, v.ValueType())
		}
		inputs[name] = onnxvk.TensorFrom(t)
	}
	checks, err := sess.Verify(context.Background(), inputs)
	if err != nil {
		return err
	}
	if len(checks) == 0 {
		fmt.Fprintf(stdout, "verify: no node runs on another device than the CPU\n")
		return nil
	}
	worst := checks[0]
	var devices []string
	for _, c := range checks {
		if !slices.Contains(devices, c.Device) {
			devices = append(devices, c.Device)
		}
		if !c.OK {
			return fmt.Errorf("verify: node %q (%s) on %s differs from the CPU: max abs error %.3g, max rel error %.3g (tolerance abs %g, rel %g)",
				c.Node, c.Op, c.Device, c.MaxAbs, c.MaxRel, c.Tol.Abs, c.Tol.Rel)
		}
		if c.MaxAbs > worst.MaxAbs {
			worst = c
		}
	}
	fmt.Fprintf(stdout, "verify: all %d nodes on %s agree with the CPU; largest difference %.3g (rel %.3g) at node %q (%s)\n",
		len(checks), strings.Join(devices, ", "), worst.MaxAbs, worst.MaxRel, worst.Node, worst.Op)
	return nil
}

// makeInputs reads the -i NAME=FILE flags and fills every other required
// input with seeded random data, saying so on w when w is not nil.
func makeInputs(sess *onnxvk.Session, specs []string, img *imageOptions, dims map[string]int64, seed uint64, w io.Writer) (map[string]graph.Value, error) {
	feeds, err := readInputs(sess, specs, img)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x6f6e6e78766b))
	for _, in := range sess.Inputs() {
		if _, ok := feeds[in.Name]; ok || in.Optional {
			continue
		}
		t, err := randomInput(in, dims, sess.HostMemoryLimit(), rng)
		if err != nil {
			return nil, err
		}
		if w != nil {
			fmt.Fprintf(w, "input  %s: random %s%v (seed %d)\n", in.Name, t.DType, t.Shape, seed)
		}
		feeds[in.Name] = t
	}
	return feeds, nil
}

// readInputs reads the -i NAME=FILE flags.
func readInputs(sess *onnxvk.Session, specs []string, img *imageOptions) (map[string]graph.Value, error) {
	feeds := map[string]graph.Value{}
	for _, spec := range specs {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return nil, usagef("-i %q: want NAME=FILE", spec)
		}
		if _, twice := feeds[name]; twice {
			return nil, usagef("-i %s: input %q is given twice", spec, name)
		}
		var (
			v   graph.Value
			err error
		)
		ext := strings.ToLower(filepath.Ext(file))
		switch {
		case ext == ".npy":
			v, err = npy.ReadFile(file)
		case ext == ".pb":
			v, err = loader.ReadValueFile(file, sessionvalues.Of(sess).Type(name))
		case slices.Contains(imageExts, ext):
			i := slices.IndexFunc(sess.Inputs(), func(in onnxvk.ValueInfo) bool { return in.Name == name })
			if i < 0 {
				err = fmt.Errorf("the model has no input %q", name)
				break
			}
			v, err = readImage(file, sess.Inputs()[i], img)
		default:
			err = errors.New("unknown file type (want .npy, .pb, or a picture: .png, .jpg, .gif)")
		}
		if err != nil {
			return nil, fmt.Errorf("input %q from %s: %w", name, file, err)
		}
		feeds[name] = v
	}
	return feeds, nil
}

// randomInput makes seeded data for an input: uniform [0, 1) for floats,
// integers in [0, 10), random bools. Symbolic dimensions take their size
// from dims, else 1. A shape whose size overflows or exceeds limit (the
// session's host memory limit; 0: none) is refused.
func randomInput(in onnxvk.ValueInfo, dims map[string]int64, limit int64, rng *rand.Rand) (*graph.Tensor, error) {
	if in.Kind != "tensor" || in.Shape == nil {
		return nil, fmt.Errorf("input %q (%s): give it with -i, random data needs a tensor of known rank", in.Name, in.Type)
	}
	shape := make([]int64, len(in.Shape))
	for i, d := range in.Shape {
		switch {
		case d >= 0:
			shape[i] = d
		case hasKey(dims, in.Dims[i]):
			shape[i] = dims[in.Dims[i]]
		default:
			shape[i] = 1
		}
	}
	size, err := graph.Bytes(in.DType, shape)
	if err != nil {
		return nil, fmt.Errorf("input %q: %w", in.Name, err)
	}
	if limit > 0 && size > limit {
		return nil, fmt.Errorf("input %q: random %s%v needs %d bytes, over the host memory limit of %d bytes: %w", in.Name, in.DType, shape, size, limit, onnxvk.ErrOutOfMemory)
	}
	t := graph.NewTensor(in.DType, shape)
	n := t.NumElements()
	switch in.DType {
	case graph.Float:
		v := graph.View[float32](t)
		for i := range v {
			v[i] = rng.Float32()
		}
	case graph.Double:
		v := graph.View[float64](t)
		for i := range v {
			v[i] = rng.Float64()
		}
	case graph.Float16:
		v := graph.View[uint16](t)
		for i := range v {
			v[i] = float16.Fromfloat32(rng.Float32()).Bits()
		}
	case graph.BFloat16:
		v := graph.View[uint16](t)
		for i := range v {
			v[i] = graph.Float32ToBFloat16(rng.Float32())
		}
	case graph.Int64:
		v := graph.View[int64](t)
		for i := range v {
			v[i] = rng.Int64N(10)
		}
	case graph.Int32:
		v := graph.View[int32](t)
		for i := range v {
			v[i] = rng.Int32N(10)
		}
	case graph.Bool, graph.Uint8, graph.Int8:
		for i := int64(0); i < n; i++ {
			t.Data[i] = byte(rng.IntN(2))
		}
	default:
		return nil, fmt.Errorf("input %q: no random data for element type %s; give it with -i", in.Name, in.DType)
	}
	return t, nil
}

func hasKey(m map[string]int64, k string) bool { _, ok := m[k]; return ok }

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// outputFiles names the file of each output: <name>.npy with characters
// outside [A-Za-z0-9._-] replaced by '_', and, where two names come out
// the same ("a/b" and "a_b"), "_2", "_3", ... added to the later ones in
// the model's order of outputs.
func outputFiles(names []string) map[string]string {
	files := make(map[string]string, len(names))
	taken := map[string]bool{}
	for _, name := range names {
		base := unsafeChars.ReplaceAllString(name, "_")
		file := base + ".npy"
		for k := 2; taken[strings.ToLower(file)]; k++ {
			file = fmt.Sprintf("%s_%d.npy", base, k)
		}
		taken[strings.ToLower(file)] = true
		files[name] = file
	}
	return files
}

// writeOutput writes t to dir/file, written under a temporary name in dir
// and renamed into place, so that a symbolic link at dir/file is replaced,
// never followed.
func writeOutput(dir, file string, t *graph.Tensor) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, file)
	if err := writeFileAtomic(path, func(w io.Writer) error { return npy.Write(w, t) }); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return path, nil
}

// summarize describes a value: type, shape and, for numeric tensors, the
// range and mean.
func summarize(v graph.Value) string {
	t, ok := v.(*graph.Tensor)
	if !ok {
		return v.ValueType().String()
	}
	s := fmt.Sprintf("%s%v", t.DType, t.Shape)
	n := t.NumElements()
	if n == 0 || t.DType == graph.String || (!t.DType.IsFloat() && !t.DType.IsInt() && t.DType != graph.Bool) {
		return s
	}
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	nans := 0
	for i := int64(0); i < n; i++ {
		x := t.Float64At(i)
		if math.IsNaN(x) {
			nans++
			continue
		}
		lo, hi, sum = math.Min(lo, x), math.Max(hi, x), sum+x
	}
	s += fmt.Sprintf(" min %.6g max %.6g mean %.6g", lo, hi, sum/float64(n-int64(nans)))
	if nans > 0 {
		s += fmt.Sprintf(" (%d NaN)", nans)
	}
	return s + " first " + firstValues(t, 5)
}

func firstValues(t *graph.Tensor, k int64) string {
	parts := []string{}
	for i := int64(0); i < min(k, t.NumElements()); i++ {
		parts = append(parts, fmt.Sprintf("%.5g", t.Float64At(i)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// runExample runs the built-in edge-detection model on the built-in picture
// and writes the picture and the result as PNG files; opts are more
// session options.
func runExample(device string, opts []onnxvk.Option, outDir string, stdout io.Writer) error {
	if outDir == "" {
		outDir = "onnxvk-example"
	}
	sess, err := onnxvk.LoadBytes(example.Model(), append([]onnxvk.Option{onnxvk.WithName("built-in example"), onnxvk.WithDevice(device)}, opts...)...)
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Fprintln(stdout, example.Description)
	if device == "auto" && sess.Device() == "cpu" {
		fmt.Fprintln(stdout, sess.DeviceReason())
	}
	in := example.Input()
	start := time.Now()
	out, err := sessionvalues.Of(sess).RunValues(context.Background(), map[string]graph.Value{sess.Inputs()[0].Name: in})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	name := sess.Outputs()[0].Name
	t, ok := out[name].(*graph.Tensor)
	if !ok {
		return fmt.Errorf("example output %q is not a tensor", name)
	}
	fmt.Fprintf(stdout, "ran the example on %s in %s\n", sess.Device(), elapsed.Round(time.Microsecond))
	fmt.Fprintf(stdout, "output %s: %s\n", name, summarize(t))
	img, err := example.ImageFromTensor(t)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	pictureFile := filepath.Join(outDir, "picture.png")
	if err := writePNG(pictureFile, example.Picture()); err != nil {
		return err
	}
	resultFile := filepath.Join(outDir, name+".png")
	if err := writePNG(resultFile, img); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (the input) and %s (the result)\n", pictureFile, resultFile)
	return nil
}

func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
