package main

import (
	"encoding/json"
	"io"

	"github.com/onnxvk/onnxvk"
)

func cmdPlan(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", "plan MODEL [--device auto|cpu|vulkan] [--config NAME] [--devices LIST] [--fp16] [--dim NAME=SIZE]... [--json]", stdout)
	device := fs.String("device", "auto", "device: auto, cpu, vulkan or vulkan:N")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	multi := addMultiDeviceFlags(fs)
	fp16 := addFP16Flag(fs)
	noFold := fs.Bool("no-fold", false, "keep shape-only subgraphs instead of folding them into constants")
	var dimList listFlag
	fs.Var(&dimList, "dim", "size of a symbolic input dimension, `NAME=SIZE`; repeatable (default 1)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, err := oneModel(pos)
	if err != nil {
		return err
	}
	dims, err := parseDims(dimList)
	if err != nil {
		return err
	}
	opts := append(append([]onnxvk.Option{onnxvk.WithDevice(*device)}, multi.options()...), fp16Options(*fp16)...)
	if *noFold {
		opts = append(opts, onnxvk.WithoutConstantFolding())
	}
	sess, err := onnxvk.Load(path, opts...)
	if err != nil {
		return err
	}
	defer sess.Close()
	shapes := map[string][]int64{}
	for name, t := range declaredTypes(sess, dims) {
		shapes[name] = t.Shape.Ints()
	}
	r, err := sess.PlanInfo(shapes)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.WriteText(stdout)
}
