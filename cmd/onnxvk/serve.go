package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/onnxvk/onnxvk/serve"
)

// cmdServe serves models over the Open Inference Protocol (package serve)
// until SIGTERM or SIGINT, then drains.
func cmdServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve [--http ADDR] [--grpc ADDR] [--device auto|cpu|vulkan] [--fp16] [--host-memory SIZE] [--name NAME] [--max-batch-size N] [--max-queue-delay D] [--instances N] [--queue N] [--max-request-size SIZE] [--tls-cert FILE --tls-key FILE] [--drain-timeout D] [--log-level LEVEL] [--log-json] MODEL...|REPO_DIR", stdout)
	httpAddr := fs.String("http", ":8000", "serve the HTTP/REST API and /metrics on `ADDR` (host:port; empty for none)")
	grpcAddr := fs.String("grpc", "", "also serve the gRPC API (grpc_predict_v2.proto) on `ADDR` (host:port, such as :8001; empty for none)")
	device := fs.String("device", "auto", "device of the models without one in their config.json: auto, cpu, vulkan or vulkan:N")
	fp16 := addFP16Flag(fs)
	hostMem := addHostMemoryFlag(fs)
	name := fs.String("name", "", "the model's `NAME` in requests, for one model file or model folder (default: the file or folder name without extension)")
	maxBatch := fs.Int("max-batch-size", 0, "merge requests equal but for the first dimension into Runs of up to `N` rows, refusing a request of more (0 or 1: no dynamic batching); a config.json's max_batch_size wins")
	maxDelay := fs.Duration("max-queue-delay", 2*time.Millisecond, "how long the first request of a batch waits for others to join it")
	instances := fs.Int("instances", 1, "Runs of each model in flight at once")
	queue := fs.Int("queue", serve.DefaultQueueSize, "requests each model's queue holds; beyond them, 429 / RESOURCE_EXHAUSTED")
	maxRequest := fs.String("max-request-size", "64M", "largest request body, `SIZE` in bytes or with a K, M or G suffix; larger gets 413 (HTTP); also the largest gRPC message, larger gets RESOURCE_EXHAUSTED")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS (and gRPC over TLS) with the certificate (PEM) in `FILE`; needs --tls-key")
	tlsKey := fs.String("tls-key", "", "the private key (PEM) of --tls-cert, in `FILE`")
	drain := fs.Duration("drain-timeout", 30*time.Second, "on SIGTERM or SIGINT, how long to wait for the requests in progress before exiting")
	logLevel := fs.String("log-level", "info", "least level logged to stderr: debug (every failed request), info, warn or error")
	logJSON := fs.Bool("log-json", false, "log JSON lines instead of key=value text")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("no model given: name model files or a repository folder")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	limit, err := parseSize(*maxRequest)
	if err != nil || limit == 0 {
		return usagef("--max-request-size %q: want a size in bytes, such as 1048576 or 64M", *maxRequest)
	}
	if *httpAddr == "" && *grpcAddr == "" {
		return usagef("no frontend: give --http ADDR or --grpc ADDR")
	}
	if limit > math.MaxInt32 {
		return usagef("--max-request-size %q: at most 2G, the largest gRPC message", *maxRequest)
	}
	memOpts, restoreGC, err := hostMem.options()
	if err != nil {
		return err
	}
	defer restoreGC()
	hopts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler = slog.NewTextHandler(stderr, hopts)
	if *logJSON {
		handler = slog.NewJSONHandler(stderr, hopts)
	}
	log := slog.New(handler)
	base := serve.ModelConfig{Name: *name, Device: *device, MaxBatchSize: *maxBatch, MaxQueueDelay: serve.Duration(*maxDelay),
		Instances: *instances, QueueSize: *queue}
	if *fp16 {
		base.Precision = "fp16"
	}
	configs, err := serve.Repository(pos, base)
	if err != nil {
		return err
	}
	s, err := serve.NewServer(configs, serve.Options{Logger: log, LoadOptions: memOpts})
	if err != nil {
		return err
	}
	var frontends []serve.Frontend
	if *httpAddr != "" {
		h, err := serve.NewHTTP(s, *httpAddr, serve.HTTPOptions{MaxRequestBytes: limit, CertFile: *tlsCert, KeyFile: *tlsKey})
		if err != nil {
			s.Close()
			return err
		}
		frontends = append(frontends, h)
		fmt.Fprintf(stdout, "serving HTTP on %s\n", h.Addr())
	}
	if *grpcAddr != "" {
		g, err := serve.NewGRPC(s, *grpcAddr, serve.GRPCOptions{MaxMessageBytes: int(limit), CertFile: *tlsCert, KeyFile: *tlsKey})
		if err != nil {
			s.Close()
			return err
		}
		frontends = append(frontends, g)
		fmt.Fprintf(stdout, "serving gRPC on %s\n", g.Addr())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return serve.Run(ctx, s, frontends, *drain)
}
