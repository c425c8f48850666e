package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader"
)

const convertHelp = `Converts a model between the ONNX protobuf format (.onnx, with its
external data) and the ONNX zip archive (one file, weights 64-byte aligned
and memory-mapped at load). The default --to is protobuf when OUT ends in
.onnx and archive otherwise. A protobuf model past protobuf's 2 GiB limit
gets its tensors of 1 KiB and more in OUT.data, beside OUT, 4096-byte
aligned. OUT is written under a temporary name and renamed into place (mode
0644); it must not be IN.`

func cmdConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", "convert IN OUT [--to archive|protobuf]", stdout)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(fs.Output(), "\n%s\n", convertHelp)
	}
	to := fs.String("to", "", "output format: archive or protobuf (default: see below)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want IN and OUT, got %d arguments", len(pos))
	}
	in, out := pos[0], pos[1]
	format, err := outputFormat(*to, func() (string, error) {
		if strings.EqualFold(filepath.Ext(out), ".onnx") {
			return "protobuf", nil
		}
		return "archive", nil
	})
	if err != nil {
		return err
	}
	if err := distinctFiles(in, out); err != nil {
		return err
	}
	m, err := loader.Load(in)
	if err != nil {
		return err
	}
	defer m.Close()
	return saveModel(stdout, m, out, format)
}

// saveModel writes m to path as an ONNX archive or protobuf, a protobuf
// past protobuf's 2 GiB limit with its tensors of 1 KiB and more in
// path.data, and says what it wrote.
func saveModel(stdout io.Writer, m *graph.Model, path, format string) error {
	if format == "archive" {
		if err := loader.SaveArchive(m, path); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: ONNX archive\n", path)
		return nil
	}
	mp, err := loader.ToProto(m)
	if err != nil {
		return err
	}
	if proto.Size(mp) <= math.MaxInt32 {
		if err := loader.Save(m, path); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: ONNX protobuf\n", path)
		return nil
	}
	data := filepath.Base(path) + ".data"
	if err := loader.Save(m, path, loader.WithExternalData(data, 1024, 4096)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: ONNX protobuf, weights in %s\n", path, data)
	return nil
}

// outputFormat returns the output format --to names ("archive" or
// "protobuf"), or, when to is "", the one deflt picks.
func outputFormat(to string, deflt func() (string, error)) (string, error) {
	switch to {
	case "":
		return deflt()
	case "archive", "protobuf":
		return to, nil
	}
	return "", usagef("--to %q: want archive or protobuf", to)
}

// distinctFiles fails when out names the same file as in (convert never
// replaces its input).
func distinctFiles(in, out string) error {
	a, err := os.Stat(in)
	if err != nil {
		return err
	}
	b, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if os.SameFile(a, b) {
		return usagef("%s is the input: write the converted model to another file", out)
	}
	return nil
}

// fileFormat returns "archive" when the file at path is a zip archive,
// else "protobuf".
func fileFormat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if loader.IsArchive(f) {
		return "archive", nil
	}
	return "protobuf", nil
}
