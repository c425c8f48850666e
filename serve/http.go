package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/onnxvk/onnxvk"
)

// HeaderContentLength is the binary tensor data extension's header: the
// length of the JSON part of a body whose tensors follow in binary.
const HeaderContentLength = "Inference-Header-Content-Length"

// DefaultMaxRequestBytes bounds a request body unless HTTPOptions says
// otherwise.
const DefaultMaxRequestBytes = 64 << 20

// HTTPOptions configure the HTTP/REST frontend.
type HTTPOptions struct {
	// MaxRequestBytes bounds request bodies (default
	// DefaultMaxRequestBytes); a larger one gets 413.
	MaxRequestBytes int64
	// CertFile and KeyFile, when set, serve HTTPS.
	CertFile, KeyFile string
}

// Frontend is a protocol frontend of a Server, served by Run.
type Frontend interface {
	// Addr is the address it listens on.
	Addr() string
	// Serve answers requests until Shutdown, then returns nil.
	Serve() error
	// Shutdown stops accepting requests and waits until those accepted
	// are answered or ctx ends.
	Shutdown(ctx context.Context) error
}

// HTTPFrontend serves the protocol's HTTP/REST API, /metrics included.
type HTTPFrontend struct {
	srv  *http.Server
	ln   net.Listener
	opts HTTPOptions
}

// NewHTTP listens on addr ("127.0.0.1:8000"; port 0 picks one) and
// returns the frontend, to be served by Serve or Run.
func NewHTTP(s *Server, addr string, opts HTTPOptions) (*HTTPFrontend, error) {
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return nil, errors.New("serve: TLS needs both a certificate and a key file")
	}
	var cfg *tls.Config
	if opts.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	h := &HTTPFrontend{ln: ln, opts: opts}
	h.srv = &http.Server{
		Handler:           s.HTTPHandler(opts),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return h, nil
}

// Addr returns the address the frontend listens on.
func (h *HTTPFrontend) Addr() string { return h.ln.Addr().String() }

// Serve answers requests until Shutdown.
func (h *HTTPFrontend) Serve() error {
	if err := h.srv.Serve(h.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting connections and waits for the requests in
// progress.
func (h *HTTPFrontend) Shutdown(ctx context.Context) error { return h.srv.Shutdown(ctx) }

// HTTPHandler returns the protocol's HTTP/REST API as a handler:
//
//	GET  /v2/health/live, /v2/health/ready, /v2
//	GET  /v2/models/NAME[/versions/V], /v2/models/NAME[/versions/V]/ready
//	POST /v2/models/NAME[/versions/V]/infer
//	POST /v2/repository/index, /v2/repository/models/NAME/load, .../unload
//	GET  /metrics
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	mux := http.NewServeMux()
	health := func(ok func() bool) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if ok() {
				w.WriteHeader(http.StatusOK)
			} else {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}
	}
	mux.HandleFunc("GET /v2/health/live", health(s.Live))
	mux.HandleFunc("GET /v2/health/ready", health(s.Ready))
	mux.HandleFunc("GET /v2", func(w http.ResponseWriter, _ *http.Request) {
		md := s.ServerMetadata()
		writeJSON(w, http.StatusOK, map[string]any{"name": md.Name, "version": md.Version, "extensions": md.Extensions})
	})
	meta := func(w http.ResponseWriter, r *http.Request) {
		md, err := s.ModelMetadata(r.Context(), r.PathValue("name"), r.PathValue("version"))
		if err != nil {
			writeError(w, err)
			return
		}
		tensors := func(ts []TensorMetadata) []map[string]any {
			out := []map[string]any{}
			for _, t := range ts {
				out = append(out, map[string]any{"name": t.Name, "datatype": t.Datatype, "shape": t.Shape})
			}
			return out
		}
		writeJSON(w, http.StatusOK, map[string]any{"name": md.Name, "versions": md.Versions, "platform": md.Platform,
			"inputs": tensors(md.Inputs), "outputs": tensors(md.Outputs)})
	}
	ready := func(w http.ResponseWriter, r *http.Request) {
		ok, err := s.ModelReady(r.Context(), r.PathValue("name"), r.PathValue("version"))
		switch {
		case err != nil:
			writeError(w, err)
		case ok:
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}
	infer := func(w http.ResponseWriter, r *http.Request) { s.serveInfer(w, r, opts.MaxRequestBytes) }
	for _, prefix := range []string{"/v2/models/{name}", "/v2/models/{name}/versions/{version}"} {
		mux.HandleFunc("GET "+prefix, meta)
		mux.HandleFunc("GET "+prefix+"/ready", ready)
		mux.HandleFunc("POST "+prefix+"/infer", infer)
	}
	mux.HandleFunc("POST /v2/repository/index", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Ready bool `json:"ready"`
		}
		if err := readJSON(r, opts.MaxRequestBytes, &body); err != nil {
			writeError(w, err)
			return
		}
		out := []map[string]any{}
		for _, m := range s.RepositoryIndex(r.Context(), body.Ready) {
			e := map[string]any{"name": m.Name, "version": m.Version, "state": m.State}
			if m.Reason != "" {
				e["reason"] = m.Reason
			}
			out = append(out, e)
		}
		writeJSON(w, http.StatusOK, out)
	})
	repo := func(do func(context.Context, string) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := readJSON(r, opts.MaxRequestBytes, &map[string]any{}); err != nil {
				writeError(w, err)
				return
			}
			if err := do(r.Context(), r.PathValue("name")); err != nil {
				writeError(w, err)
				return
			}
			w.WriteHeader(http.StatusOK)
		}
	}
	mux.HandleFunc("POST /v2/repository/models/{name}/load", repo(s.LoadModel))
	mux.HandleFunc("POST /v2/repository/models/{name}/unload", repo(s.UnloadModel))
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		s.WriteMetrics(w)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, Errorf(CodeNotFound, "no endpoint %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// readJSON decodes an optional JSON body into v.
func readJSON(r *http.Request, limit int64, v any) error {
	body, err := readBody(r, limit)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return Errorf(CodeInvalidArgument, "malformed JSON body: %v", err)
	}
	return nil
}

// errTooLarge is a body over the limit: INVALID_ARGUMENT, and 413 on
// HTTP.
type errTooLarge struct{ limit int64 }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("the request body is larger than the limit of %d bytes", e.limit)
}

// readBody reads a request body of at most limit bytes.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	tooLarge := &Error{Code: CodeInvalidArgument, Msg: errTooLarge{limit}.Error(), Err: errTooLarge{limit}}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	rd := http.MaxBytesReader(nil, r.Body, limit)
	var body []byte
	var err error
	if r.ContentLength > 0 {
		// One allocation of the announced size instead of ReadAll's
		// doublings.
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(rd, body)
	} else {
		body, err = io.ReadAll(rd)
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, Errorf(CodeInvalidArgument, "reading the request body: %v", err)
	}
	return body, nil
}

// writeError writes the protocol's error body {"error": "..."} with the
// error's status.
func writeError(w http.ResponseWriter, err error) {
	status := CodeOf(err).HTTPStatus()
	if _, ok := errors.AsType[errTooLarge](err); ok {
		status = http.StatusRequestEntityTooLarge
	}
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// serveInfer answers POST .../infer.
func (s *Server) serveInfer(w http.ResponseWriter, r *http.Request, limit int64) {
	start := time.Now()
	name := r.PathValue("name")
	m, err := s.lookup(name, r.PathValue("version"))
	if err == nil && m.queued.Load() >= int64(m.cfg.QueueSize) {
		// Refused before its body is decoded, so that an overload does
		// not hold the bodies of requests that cannot run (Infer checks
		// again). The body is read and dropped: a client still writing
		// it would otherwise see a broken pipe instead of the 429.
		io.Copy(io.Discard, http.MaxBytesReader(nil, r.Body, limit))
		err = m.fullError()
	}
	if err != nil {
		s.metrics.observe(name, CodeOf(err), time.Since(start))
		writeError(w, err)
		return
	}
	req, err := decodeInfer(r, limit)
	if err != nil {
		s.metrics.observe(name, CodeOf(err), time.Since(start))
		s.log.Debug("bad inference request", "model", name, "err", err)
		writeError(w, err)
		return
	}
	req.ModelName, req.ModelVersion = name, r.PathValue("version")
	ctx := r.Context()
	if us, ok, err := req.Parameters.Int64("timeout"); err != nil {
		writeError(w, err)
		return
	} else if ok && us > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(us)*time.Microsecond)
		defer cancel()
	}
	resp, err := s.Infer(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	allBinary, err := req.Parameters.Bool("binary_data_output")
	if err != nil {
		writeError(w, err)
		return
	}
	head, bin, err := encodeInfer(resp, allBinary)
	if err != nil {
		writeError(w, err)
		return
	}
	if bin == nil {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set(HeaderContentLength, strconv.Itoa(len(head)))
	}
	n := len(head)
	for _, b := range bin {
		n += len(b)
	}
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	w.Write(head)
	for _, b := range bin {
		w.Write(b)
	}
}

// jsonRequest is $inference_request on the wire.
type jsonRequest struct {
	ID         string          `json:"id"`
	Parameters json.RawMessage `json:"parameters"`
	Inputs     []struct {
		Name       string          `json:"name"`
		Shape      []int64         `json:"shape"`
		Datatype   string          `json:"datatype"`
		Parameters json.RawMessage `json:"parameters"`
		Data       json.RawMessage `json:"data"`
	} `json:"inputs"`
	Outputs []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"outputs"`
}

// decodeInfer reads an inference request body: JSON, or JSON followed by
// binary tensor data (Inference-Header-Content-Length).
func decodeInfer(r *http.Request, limit int64) (*InferRequest, error) {
	body, err := readBody(r, limit)
	if err != nil {
		return nil, err
	}
	head, bin := body, []byte(nil)
	if h := r.Header.Get(HeaderContentLength); h != "" {
		n, err := strconv.ParseInt(h, 10, 64)
		if err != nil || n < 0 || n > int64(len(body)) {
			return nil, Errorf(CodeInvalidArgument, "%s %q: not a length within the body's %d bytes", HeaderContentLength, h, len(body))
		}
		head, bin = body[:n], body[n:]
	}
	var jr jsonRequest
	if err := json.Unmarshal(head, &jr); err != nil {
		return nil, Errorf(CodeInvalidArgument, "malformed JSON request: %v", err)
	}
	req := &InferRequest{ID: jr.ID}
	if req.Parameters, err = parseParameters(jr.Parameters, "the request"); err != nil {
		return nil, err
	}
	if len(jr.Inputs) == 0 {
		return nil, Errorf(CodeInvalidArgument, "the request has no inputs")
	}
	for _, in := range jr.Inputs {
		t := RequestTensor{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape}
		if t.Shape == nil {
			return nil, Errorf(CodeInvalidArgument, "input %q has no shape", in.Name)
		}
		if t.Parameters, err = parseParameters(in.Parameters, "input "+strconv.Quote(in.Name)); err != nil {
			return nil, err
		}
		size, isBinary, err := t.Parameters.Int64("binary_data_size")
		switch {
		case err != nil:
			return nil, err
		case isBinary:
			if len(in.Data) > 0 && string(in.Data) != "null" {
				return nil, Errorf(CodeInvalidArgument, "input %q has both binary_data_size and data", in.Name)
			}
			if size < 0 || size > int64(len(bin)) {
				return nil, Errorf(CodeInvalidArgument, "input %q: binary_data_size %d, but %d bytes of binary data remain", in.Name, size, len(bin))
			}
			t.Raw, bin = bin[:size:size], bin[size:]
			delete(t.Parameters, "binary_data_size")
		default:
			if len(in.Data) == 0 {
				return nil, Errorf(CodeInvalidArgument, "input %q has no data", in.Name)
			}
			dt, ok := DType(in.Datatype)
			if !ok {
				return nil, Errorf(CodeInvalidArgument, "input %q: unknown datatype %q", in.Name, in.Datatype)
			}
			if t.Data, err = parseData(in.Data, dt); err != nil {
				return nil, Errorf(CodeInvalidArgument, "input %q: data: %v", in.Name, err)
			}
		}
		req.Inputs = append(req.Inputs, t)
	}
	if len(bin) > 0 {
		return nil, Errorf(CodeInvalidArgument, "%d bytes of binary data after the inputs' binary_data_size", len(bin))
	}
	for _, o := range jr.Outputs {
		p, err := parseParameters(o.Parameters, "output "+strconv.Quote(o.Name))
		if err != nil {
			return nil, err
		}
		req.Outputs = append(req.Outputs, RequestedOutput{Name: o.Name, Parameters: p})
	}
	return req, nil
}

// parseParameters decodes a parameters object: whole numbers become
// int64, others float64.
func parseParameters(raw json.RawMessage, of string) (Parameters, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, Errorf(CodeInvalidArgument, "parameters of %s: %v", of, err)
	}
	p := Parameters{}
	for k, v := range m {
		var x any
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if err := d.Decode(&x); err != nil {
			return nil, Errorf(CodeInvalidArgument, "parameter %q of %s: %v", k, of, err)
		}
		switch n := x.(type) {
		case json.Number:
			if i, err := n.Int64(); err == nil {
				p[k] = i
			} else if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
				p[k] = u
			} else {
				f, _ := n.Float64()
				p[k] = f
			}
		case bool, string:
			p[k] = n
		default:
			return nil, Errorf(CodeInvalidArgument, "parameter %q of %s: %s is not a bool, number or string", k, of, v)
		}
	}
	return p, nil
}

// encodeInfer writes $inference_response: the JSON and, for the outputs
// sent as binary data, their bytes in order (nil when none).
func encodeInfer(resp *InferResponse, allBinary bool) ([]byte, [][]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"model_name":`)
	writeString(&b, resp.ModelName)
	b.WriteString(`,"model_version":`)
	writeString(&b, resp.ModelVersion)
	if resp.ID != "" {
		b.WriteString(`,"id":`)
		writeString(&b, resp.ID)
	}
	if len(resp.Parameters) > 0 {
		p, err := json.Marshal(resp.Parameters)
		if err != nil {
			return nil, nil, Errorf(CodeInternal, "encoding the response's parameters: %v", err)
		}
		b.WriteString(`,"parameters":`)
		b.Write(p)
	}
	b.WriteString(`,"outputs":[`)
	var bin [][]byte
	for i := range resp.Outputs {
		o := &resp.Outputs[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":`)
		writeString(&b, o.Name)
		b.WriteString(`,"datatype":"` + o.Datatype + `","shape":[`)
		for j, d := range o.Shape {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(d, 10))
		}
		b.WriteByte(']')
		binary := allBinary
		if v, ok := o.Parameters["binary_data"].(bool); ok {
			binary = v
		}
		if binary {
			raw := o.Raw()
			bin = append(bin, raw)
			b.WriteString(`,"parameters":{"binary_data_size":` + strconv.Itoa(len(raw)) + `}}`)
			continue
		}
		b.WriteString(`,"data":`)
		writeValues(&b, o.Values())
		b.WriteByte('}')
	}
	b.WriteString("]}")
	return b.Bytes(), bin, nil
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

// writeValues writes a flat JSON array of the elements. Floats that JSON
// cannot write go as NaN, Infinity and -Infinity, as Python's json module
// writes and reads them (KServe's Python servers and clients).
func writeValues(b *bytes.Buffer, values any) {
	buf := b.AvailableBuffer()
	buf = append(buf, '[')
	float := func(f float64, bits int) {
		switch {
		case math.IsNaN(f):
			buf = append(buf, "NaN"...)
		case math.IsInf(f, 1):
			buf = append(buf, "Infinity"...)
		case math.IsInf(f, -1):
			buf = append(buf, "-Infinity"...)
		default:
			buf = strconv.AppendFloat(buf, f, 'g', -1, bits)
		}
	}
	switch v := values.(type) {
	case []bool:
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendBool(buf, x)
		}
	case []int64:
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, x, 10)
		}
	case []uint64:
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendUint(buf, x, 10)
		}
	case []float32:
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			float(float64(x), 32)
		}
	case []float64:
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			float(x, 64)
		}
	case []string:
		for i, x := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			q, _ := json.Marshal(x)
			buf = append(buf, q...)
		}
	}
	buf = append(buf, ']')
	b.Write(buf)
}

// parseData reads a tensor's JSON data, a flat or nested array of
// elements (already checked to be JSON), into the slice
// RequestTensor.Data takes for dt.
func parseData(raw json.RawMessage, dt onnxvk.DType) (any, error) {
	if dt == onnxvk.String {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		var out []string
		var walk func(v any) error
		walk = func(v any) error {
			switch x := v.(type) {
			case string:
				out = append(out, x)
			case []any:
				for _, e := range x {
					if err := walk(e); err != nil {
						return err
					}
				}
			default:
				return fmt.Errorf("BYTES elements are strings, not %v", x)
			}
			return nil
		}
		if err := walk(v); err != nil {
			return nil, err
		}
		return out, nil
	}
	var (
		bools  []bool
		ints   []int64
		uints  []uint64
		f32    []float32
		f64    []float64
		tokErr error
	)
	token := func(tok string) {
		if tokErr != nil {
			return
		}
		var err error
		switch {
		case dt == onnxvk.Bool:
			switch tok {
			case "true", "false":
				bools = append(bools, tok == "true")
			default:
				err = fmt.Errorf("BOOL elements are true or false, not %s", tok)
			}
		case dt == onnxvk.Float32:
			var f float64
			f, err = strconv.ParseFloat(tok, 32)
			f32 = append(f32, float32(f))
		case dt.IsFloat():
			var f float64
			f, err = strconv.ParseFloat(tok, 64)
			f64 = append(f64, f)
		case dt.IsSigned():
			var n int64
			n, err = strconv.ParseInt(tok, 10, 64)
			ints = append(ints, n)
		default:
			var n uint64
			n, err = strconv.ParseUint(tok, 10, 64)
			uints = append(uints, n)
		}
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				tokErr = fmt.Errorf("%s is out of the range of %s", tok, dt)
			} else if tokErr == nil {
				tokErr = fmt.Errorf("%s is not a %s element", tok, dt)
			}
		}
	}
	depth, start := 0, -1
	for i, c := range raw {
		switch c {
		case '[', ']', ',', ' ', '\t', '\r', '\n':
			if start >= 0 {
				token(string(raw[start:i]))
				start = -1
			}
			switch c {
			case '[':
				depth++
			case ']':
				depth--
			}
		case '{', '"':
			return nil, fmt.Errorf("%s elements are numbers%s", dt, map[bool]string{true: " or booleans"}[dt == onnxvk.Bool])
		default:
			if depth == 0 && start < 0 {
				return nil, errors.New("data must be an array")
			}
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		token(string(raw[start:]))
	}
	if tokErr != nil {
		return nil, tokErr
	}
	switch {
	case dt == onnxvk.Bool:
		return nonNil(bools), nil
	case dt == onnxvk.Float32:
		return nonNil(f32), nil
	case dt.IsFloat():
		return nonNil(f64), nil
	case dt.IsSigned():
		return nonNil(ints), nil
	}
	return nonNil(uints), nil
}

// nonNil returns an empty slice for nil, so that an empty array is data
// of no elements rather than none.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
