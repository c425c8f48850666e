package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/serve"
	"github.com/onnxvk/onnxvk/serve/client"
)

// serverBenchFlags are the bench flags that apply with --server; the others
// configure a local model.
var serverBenchFlags = map[string]bool{
	"server": true, "warmup": true, "runs": true, "duration": true, "concurrency": true, "json": true, "seed": true,
}

// benchServer measures the model name on the server at url the way bench
// measures a local model: the first request, warm-up, then timed requests
// from concurrency goroutines, each through its own connection. Inputs are
// random, shaped by the model's metadata (a dimension of -1 is 1). Load is
// the time to connect and read the model's metadata; the memory and device
// figures are the server's own business and stay 0.
func benchServer(url, name string, warmup, runs, concurrency int, duration time.Duration, seed uint64, asJSON bool, stdout, stderr io.Writer) error {
	phases := newPhases(stderr)
	phases.say("asking " + url + " for model " + name)
	ctx := context.Background()
	start := time.Now()
	clients := make([]client.Client, concurrency)
	for i := range clients {
		c, err := client.New(url, client.Options{})
		if err != nil {
			return err
		}
		defer c.Close()
		clients[i] = c
	}
	md, err := clients[0].ModelMetadata(ctx, name, "")
	if err != nil {
		return err
	}
	sm, err := clients[0].ServerMetadata(ctx)
	if err != nil {
		return err
	}
	res := benchResult{Model: name, Version: sm.Name + " " + sm.Version, Device: "server", Server: url, LoadMS: ms(time.Since(start)),
		Warmup: warmup, Concurrency: concurrency, Threads: runtime.GOMAXPROCS(0), Inputs: map[string][]int64{}}
	req, err := randomRequest(md, seed)
	if err != nil {
		return err
	}
	for _, in := range req.Inputs {
		res.Inputs[in.Name] = in.Shape
	}
	next := make(chan client.Client, concurrency)
	for _, c := range clients {
		next <- c
	}
	run := func() (time.Duration, error) {
		c := <-next
		defer func() { next <- c }()
		t0 := time.Now()
		_, err := c.Infer(ctx, req)
		return time.Since(t0), err
	}
	if _, err := measure(&res, run, warmup, runs, duration, concurrency, "request", phases, stderr, asJSON); err != nil {
		return err
	}
	return printBench(stdout, &res, asJSON, "")
}

// randomRequest makes a request with random data for every input of a
// model's metadata (see randomInput), in the binary form.
func randomRequest(md serve.ModelMetadata, seed uint64) (*serve.InferRequest, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6f6e6e78766b))
	req := &serve.InferRequest{ModelName: md.Name}
	for _, in := range md.Inputs {
		dt, ok := serve.DType(in.Datatype)
		if !ok {
			return nil, fmt.Errorf("model %q: input %q has datatype %q, unknown to the protocol", md.Name, in.Name, in.Datatype)
		}
		t, err := randomInput(onnxvk.ValueInfo{Name: in.Name, Kind: "tensor", DType: dt, Shape: in.Shape, Dims: make([]string, len(in.Shape))}, nil, 0, rng)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", md.Name, err)
		}
		req.Inputs = append(req.Inputs, serve.RequestTensor{Name: in.Name, Datatype: in.Datatype, Shape: t.Shape, Raw: t.Data})
	}
	return req, nil
}

// localFlags lists the flags set on fs that do not apply with --server.
func localFlags(fs *flag.FlagSet) string {
	var local []string
	fs.Visit(func(f *flag.Flag) {
		if !serverBenchFlags[f.Name] {
			local = append(local, "--"+f.Name)
		}
	})
	return strings.Join(local, ", ")
}
