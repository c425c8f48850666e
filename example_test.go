package onnxvk_test

import (
	"context"
	"fmt"
	"log"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
)

// scaleModel builds y = Relu(x · w) over x [N, 2], w = [[1, 2], [3, -4]],
// with a symbolic batch N: a model made in Go, which a Session takes as it
// takes one read by Load or LoadBytes.
func scaleModel() *graph.Model {
	g := graph.NewGraph("scale")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N"), graph.DimOf(2)})}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N"), graph.DimOf(2)})}}
	g.Initializers["w"], _ = graph.FromSlice(graph.Float, []int64{2, 2}, []float32{1, 2, 3, -4})
	g.Nodes = []*graph.Node{
		{Index: 0, Name: "product", OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"xw"}},
		{Index: 1, Name: "relu", OpType: "Relu", Inputs: []string{"xw"}, Outputs: []string{"y"}},
	}
	return &graph.Model{Name: "scale", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// A Session runs a model: from a file with Load (or LoadBytes,
// LoadReaderAt), or made in Go with NewSession. WithDevice("auto"), the
// default, takes a GPU when there is a good one.
func Example() {
	sess, err := onnxvk.NewSession(scaleModel(), onnxvk.WithDevice("cpu"))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	for _, in := range sess.Inputs() {
		fmt.Println("input", in.Name, in.Type)
	}
	x, err := onnxvk.NewTensor([]int64{2, 2}, []float32{1, 1, 2, -1})
	if err != nil {
		log.Fatal(err)
	}
	out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	if err != nil {
		log.Fatal(err)
	}
	y, err := onnxvk.Data[float32](out["y"])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("y", out["y"].Shape(), y)
	// Output:
	// input x float32[N 2]
	// y [2 2] [4 0 0 8]
}

// Devices lists what sessions can run on; DeviceReason says why a session
// runs where it does.
func ExampleDevices() {
	devices, reason := onnxvk.Devices()
	for _, d := range devices {
		fmt.Printf("%s: %s (%s), auto %v\n", d.Name, d.Description, d.Kind, d.Auto)
	}
	if reason != "" {
		fmt.Println("auto runs on the CPU:", reason)
	}
	sess, err := onnxvk.NewSession(scaleModel())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	fmt.Println(sess.DeviceReason())
}

// Outputs named in KeepOnDevice stay in GPU memory as device tensors, and a
// later Run of the same Session reads them in place: a decoder's KV cache
// never crosses the bus (under WithoutShapeClasses, which keeps its growing
// Concat on the GPU). On the CPU they are plain host tensors.
func ExampleSession_RunWith() {
	sess, err := onnxvk.NewSession(scaleModel(), onnxvk.WithDevice("cpu"))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	x, err := onnxvk.NewTensor([]int64{1, 2}, []float32{1, 0})
	if err != nil {
		log.Fatal(err)
	}
	keep := onnxvk.RunOptions{KeepOnDevice: []string{"y"}}
	for step := range 3 {
		out, err := sess.RunWith(context.Background(), map[string]*onnxvk.Tensor{"x": x}, keep)
		if err != nil {
			log.Fatal(err)
		}
		x.Release() // frees a device tensor at once; a host tensor ignores it
		x = out["y"]
		y, err := x.Float32s() // copies a device tensor to the host
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(step, y, "on device:", x.OnDevice() != "")
	}
	// Output:
	// 0 [1 2] on device: false
	// 1 [7 0] on device: false
	// 2 [7 14] on device: false
}

// Verify runs each node placed on a GPU alone on the CPU's values of its
// inputs and compares: the first node whose outputs differ beyond its op's
// tolerance is where a wrong result starts. On the CPU there is nothing to
// check.
func ExampleSession_Verify() {
	sess, err := onnxvk.NewSession(scaleModel())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	x, err := onnxvk.NewTensor([]int64{1, 2}, []float32{1, 2})
	if err != nil {
		log.Fatal(err)
	}
	checks, err := sess.Verify(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range checks {
		fmt.Printf("%s on %s: max abs error %.3g, within %v: %v\n", c.Node, c.Device, c.MaxAbs, c.Tol, c.OK)
	}
}

// A Run under a trace records every step: its device, its time on the host
// and, on a GPU, its time on the device (timestamps). WriteChrome saves a
// trace for Perfetto or chrome://tracing.
func Example_profile() {
	sess, err := onnxvk.NewSession(scaleModel(), onnxvk.WithDevice("cpu"))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	x, err := onnxvk.NewTensor([]int64{1, 2}, []float32{1, 2})
	if err != nil {
		log.Fatal(err)
	}
	tr := backend.NewTrace()
	if _, err := sess.Run(backend.WithTrace(context.Background(), tr), map[string]*onnxvk.Tensor{"x": x}); err != nil {
		log.Fatal(err)
	}
	for _, ev := range tr.Events() {
		fmt.Println(ev.Name, ev.Op, ev.Device)
	}
	// Output:
	// product MatMul cpu
	// relu Relu cpu
}

// RunBatch runs several requests; with a device configuration of pipeline
// stages (see ShardStages) stage k works on request i while stage k+1
// works on request i-1. The outputs are those of separate Runs.
func ExampleSession_RunBatch() {
	sess, err := onnxvk.NewSession(scaleModel(), onnxvk.WithDevice("cpu"))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	var requests []map[string]*onnxvk.Tensor
	for i := range 3 {
		x, err := onnxvk.NewTensor([]int64{1, 2}, []float32{float32(i), 1})
		if err != nil {
			log.Fatal(err)
		}
		requests = append(requests, map[string]*onnxvk.Tensor{"x": x})
	}
	outs, err := sess.RunBatch(context.Background(), requests)
	if err != nil {
		log.Fatal(err)
	}
	for i, out := range outs {
		y, err := out["y"].Float32s()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(i, y)
	}
	// Output:
	// 0 [3 0]
	// 1 [4 0]
	// 2 [5 0]
}
