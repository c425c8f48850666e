package serve

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onnxvk/onnxvk"
)

// Extensions lists the protocol extensions the server implements, as the
// server metadata reports them.
var Extensions = []string{"binary_tensor_data", "model_repository"}

// Options configure a Server.
type Options struct {
	// Logger receives the server's structured logs (nil: slog.Default()).
	Logger *slog.Logger
	// LoadOptions are passed to onnxvk.Load for every model, before the
	// model's own (device, precision).
	LoadOptions []onnxvk.Option
}

// Server is the protocol's core: the model repository and inference
// through each model's queue and batcher. Its methods are safe for
// concurrent use; both frontends call them.
type Server struct {
	log     *slog.Logger
	opts    Options
	metrics *metrics

	mu sync.RWMutex
	// configs are the models the repository knows, loaded or not; models
	// the loaded ones.
	configs map[string]ModelConfig
	models  map[string]*model
	// draining is set by Drain: the server is no longer ready.
	draining atomic.Bool
}

// NewServer loads every model of configs and returns a server ready to
// answer. On an error it closes the models it loaded.
func NewServer(configs []ModelConfig, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{log: opts.Logger, opts: opts, metrics: newMetrics(), configs: map[string]ModelConfig{}, models: map[string]*model{}}
	for _, c := range configs {
		if _, dup := s.configs[c.Name]; dup {
			return nil, fmt.Errorf("serve: two models named %q", c.Name)
		}
		s.configs[c.Name] = c
	}
	for _, c := range configs {
		if err := s.load(c); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// load loads one model and starts its batcher.
func (s *Server) load(c ModelConfig) error {
	c = c.withDefaults()
	opts := append(slices.Clone(s.opts.LoadOptions), onnxvk.WithName(c.Name))
	if c.Device != "" {
		opts = append(opts, onnxvk.WithDevice(c.Device))
	}
	switch c.Precision {
	case "", "fp32":
	case "fp16":
		opts = append(opts, onnxvk.WithFP16())
	case "fp16-weights":
		opts = append(opts, onnxvk.WithFP16Weights())
	default:
		return fmt.Errorf("serve: model %q: precision %q is not fp32, fp16 or fp16-weights", c.Name, c.Precision)
	}
	opts = append(opts, onnxvk.WithoutShapeClassesIf(func(inputs, outputs []onnxvk.ValueInfo) bool {
		return plansEachBatchSize(c, inputs, outputs)
	}))
	start := time.Now()
	sess, err := onnxvk.Load(c.Path, opts...)
	if err != nil {
		return fmt.Errorf("serve: model %q: %w", c.Name, err)
	}
	m, err := newModel(c, sess, s.metrics.model(c.Name), s.log)
	if err != nil {
		sess.Close()
		return err
	}
	s.mu.Lock()
	old := s.models[c.Name]
	s.models[c.Name] = m
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	s.log.Info("model loaded", "model", c.Name, "path", c.Path, "device", sess.Device(), "precision", sess.Precision().String(),
		"max_batch_size", c.MaxBatchSize, "batching", m.batching, "plans", sess.PlanStats().Compiled, "max_queue_delay", c.MaxQueueDelay.String(),
		"instances", c.Instances, "queue", c.QueueSize, "load_time", time.Since(start).String())
	return nil
}

// Live reports whether the server is alive: true while it exists.
func (s *Server) Live() bool { return true }

// Ready reports whether the server takes inference requests: until Drain
// (the models are loaded before NewServer returns; ModelReady tells of
// one model).
func (s *Server) Ready() bool { return !s.draining.Load() }

// Drain marks the server as not ready, so that health checks steer new
// traffic elsewhere while the frontends finish what they accepted.
func (s *Server) Drain() {
	if !s.draining.Swap(true) {
		s.log.Info("draining: the server no longer reports ready")
	}
}

// ServerMetadata returns the server's name, version and extensions.
func (s *Server) ServerMetadata() ServerMetadata {
	return ServerMetadata{Name: "onnxvk", Version: onnxvk.Build().Version, Extensions: slices.Clone(Extensions)}
}

// lookup returns a loaded model, NOT_FOUND for an unknown name or version.
func (s *Server) lookup(name, version string) (*model, error) {
	s.mu.RLock()
	m := s.models[name]
	s.mu.RUnlock()
	if m == nil {
		if _, known := s.configs[name]; known {
			return nil, Errorf(CodeNotFound, "model %q is not loaded", name)
		}
		return nil, Errorf(CodeNotFound, "unknown model %q", name)
	}
	if version != "" && version != m.cfg.Version {
		return nil, Errorf(CodeNotFound, "model %q has no version %q (it has %q)", name, version, m.cfg.Version)
	}
	return m, nil
}

// ModelReady reports whether the model is loaded and takes requests; an
// error for an unknown model or version.
func (s *Server) ModelReady(_ context.Context, name, version string) (bool, error) {
	m, err := s.lookup(name, version)
	if err != nil {
		return false, err
	}
	return !s.draining.Load() && !m.closed.Load(), nil
}

// ModelMetadata describes a model's inputs and outputs.
func (s *Server) ModelMetadata(_ context.Context, name, version string) (ModelMetadata, error) {
	m, err := s.lookup(name, version)
	if err != nil {
		return ModelMetadata{}, err
	}
	return m.meta, nil
}

// Infer runs an inference request through the model's queue: it may be
// merged with others into one Run (dynamic batching). It returns an *Error
// (see CodeOf) for a bad request (INVALID_ARGUMENT), an unknown model
// (NOT_FOUND), a full queue (RESOURCE_EXHAUSTED) and the end of ctx
// (DEADLINE_EXCEEDED, CANCELLED).
func (s *Server) Infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	start := time.Now()
	resp, err := s.infer(ctx, req)
	var name, id string
	if req != nil {
		name, id = req.ModelName, req.ID
	}
	s.metrics.observe(name, CodeOf(err), time.Since(start))
	if err != nil {
		code := CodeOf(err)
		lvl := slog.LevelDebug
		if code == CodeInternal || code == CodeUnknown {
			lvl = slog.LevelError
		}
		s.log.Log(ctx, lvl, "inference failed", "model", name, "id", id, "code", code.String(), "err", err)
		if _, ok := err.(*Error); !ok {
			err = &Error{Code: code, Msg: err.Error(), Err: err}
		}
	}
	return resp, err
}

func (s *Server) infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	if req == nil {
		return nil, Errorf(CodeInvalidArgument, "no request")
	}
	if s.draining.Load() {
		return nil, Errorf(CodeUnavailable, "the server is shutting down")
	}
	m, err := s.lookup(req.ModelName, req.ModelVersion)
	if err != nil {
		return nil, err
	}
	p, err := m.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	outs, err := m.submit(ctx, p)
	if err != nil {
		return nil, err
	}
	resp := &InferResponse{ModelName: m.cfg.Name, ModelVersion: m.cfg.Version, ID: req.ID}
	// The outputs in the order requested, else the model's.
	names := m.outputNames
	params := map[string]Parameters{}
	if len(req.Outputs) > 0 {
		names = nil
		for _, o := range req.Outputs {
			params[o.Name] = o.Parameters
			if !slices.Contains(names, o.Name) {
				names = append(names, o.Name)
			}
		}
	}
	for _, name := range names {
		t, ok := outs[name]
		if !ok {
			return nil, Errorf(CodeInternal, "model %q: the run returned no output %q", m.cfg.Name, name)
		}
		rt, err := NewResponseTensor(name, t, params[name])
		if err != nil {
			return nil, err
		}
		resp.Outputs = append(resp.Outputs, rt)
	}
	return resp, nil
}

// InferCapacity is how many inference requests the loaded models take at
// once: each model's queue plus what its Runs in flight hold (instance
// count times max_batch_size with batching, else the instance count).
// The gRPC frontend holds at most this many calls by default
// (GRPCOptions.MaxInferCalls).
func (s *Server) InferCapacity() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, m := range s.models {
		per := 1
		if m.batching {
			per = m.cfg.MaxBatchSize
		}
		n += m.cfg.QueueSize + m.cfg.Instances*per
	}
	return n
}

// Close stops taking requests, ends every model's batcher (requests still
// queued fail with UNAVAILABLE) and closes the sessions.
func (s *Server) Close() error {
	s.Drain()
	s.mu.Lock()
	models := s.models
	s.models = map[string]*model{}
	s.mu.Unlock()
	for _, m := range models {
		m.close()
	}
	return nil
}

// RepositoryModel is an entry of the repository index.
type RepositoryModel struct {
	Name    string
	Version string
	// State is "READY" for a loaded model, else "UNAVAILABLE".
	State  string
	Reason string
}

// RepositoryIndex lists the repository's models, loaded or not, by name
// (the model repository extension).
func (s *Server) RepositoryIndex(_ context.Context, readyOnly bool) []RepositoryModel {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []RepositoryModel
	for name, c := range s.configs {
		e := RepositoryModel{Name: name, Version: c.withDefaults().Version, State: "UNAVAILABLE", Reason: "unloaded"}
		if _, ok := s.models[name]; ok {
			e.State, e.Reason = "READY", ""
		} else if readyOnly {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LoadModel loads (or reloads) a model of the repository.
func (s *Server) LoadModel(_ context.Context, name string) error {
	s.mu.RLock()
	c, ok := s.configs[name]
	s.mu.RUnlock()
	if !ok {
		return Errorf(CodeNotFound, "unknown model %q", name)
	}
	if err := s.load(c); err != nil {
		return &Error{Code: CodeInvalidArgument, Msg: err.Error(), Err: err}
	}
	return nil
}

// UnloadModel unloads a model: requests in its queue fail with
// UNAVAILABLE, the runs in flight finish, and its session is closed.
func (s *Server) UnloadModel(_ context.Context, name string) error {
	s.mu.Lock()
	m := s.models[name]
	delete(s.models, name)
	_, known := s.configs[name]
	s.mu.Unlock()
	if m == nil {
		if known {
			return nil
		}
		return Errorf(CodeNotFound, "unknown model %q", name)
	}
	m.close()
	s.log.Info("model unloaded", "model", name)
	return nil
}

// metadataOf describes a model's inputs and outputs, refusing a model
// whose inputs or outputs are not tensors of a type the protocol carries.
func metadataOf(c ModelConfig, sess *onnxvk.Session) (ModelMetadata, error) {
	md := ModelMetadata{Name: c.Name, Versions: []string{c.Version}, Platform: "onnx"}
	for _, side := range []struct {
		what string
		vis  []onnxvk.ValueInfo
		to   *[]TensorMetadata
	}{{"input", sess.Inputs(), &md.Inputs}, {"output", sess.Outputs(), &md.Outputs}} {
		for _, vi := range side.vis {
			if vi.Kind != "" && vi.Kind != "tensor" {
				return md, fmt.Errorf("serve: model %q: %s %q is not a tensor (%v): the protocol carries tensors only", c.Name, side.what, vi.Name, vi.Type)
			}
			dt, ok := Datatype(vi.DType)
			if !ok {
				return md, fmt.Errorf("serve: model %q: %s %q has element type %s, which the protocol cannot carry", c.Name, side.what, vi.Name, vi.DType)
			}
			tm := TensorMetadata{Name: vi.Name, Datatype: dt, Shape: []int64{}}
			if vi.Shape == nil {
				tm.Shape = []int64{-1}
			}
			tm.Shape = append(tm.Shape, vi.Shape...)
			*side.to = append(*side.to, tm)
		}
	}
	return md, nil
}

// describe lists shapes for messages: "[1 3 224 224]".
func describe(shapes map[string][]int64) string {
	var parts []string
	for n, s := range shapes {
		parts = append(parts, fmt.Sprintf("%s%v", n, s))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
