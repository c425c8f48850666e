package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/onnxvk/onnxvk/serve"
)

// headerLength is the binary tensor data extension's header: the length
// of the JSON that begins a body, before the tensors' binary data.
const headerLength = "Inference-Header-Content-Length"

// httpClient speaks the protocol over HTTP/REST.
type httpClient struct {
	base   *url.URL
	hc     *http.Client
	listed bool
}

func newHTTP(u *url.URL, opts Options) *httpClient {
	hc := opts.HTTPClient
	if hc == nil {
		// Keep a connection per concurrent caller rather than the default
		// transport's 2, which would open a new one per request under load.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 256
		hc = &http.Client{Transport: tr}
	}
	base := *u
	base.Path, base.RawQuery, base.Fragment = "", "", ""
	return &httpClient{base: &base, hc: hc, listed: opts.Listed}
}

// modelPath is a model's path: /v2/models/NAME[/versions/VERSION].
func modelPath(name, version string) string {
	p := "/v2/models/" + url.PathEscape(name)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

// codeOfHTTP is the protocol status of an HTTP status (the reverse of
// serve.Code.HTTPStatus).
func codeOfHTTP(status int) serve.Code {
	switch status {
	case http.StatusBadRequest:
		return serve.CodeInvalidArgument
	case http.StatusNotFound:
		return serve.CodeNotFound
	case http.StatusTooManyRequests, http.StatusRequestEntityTooLarge:
		return serve.CodeResourceExhausted
	case http.StatusServiceUnavailable:
		return serve.CodeUnavailable
	case http.StatusGatewayTimeout:
		return serve.CodeDeadlineExceeded
	case 499:
		return serve.CodeCanceled
	case http.StatusNotImplemented:
		return serve.CodeUnimplemented
	}
	return serve.CodeInternal
}

// do sends a request and returns the body of a 200 answer; any other
// status is a *serve.Error with the message of the body's "error".
func (c *httpClient) do(ctx context.Context, method, path string, header http.Header, body []byte) (*http.Response, []byte, error) {
	u := *c.base
	u.Path = path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, &serve.Error{Code: serve.CodeOf(ctx.Err()), Msg: err.Error(), Err: err}
		}
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("client: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		msg := string(data)
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return resp, data, &serve.Error{Code: codeOfHTTP(resp.StatusCode), Msg: fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, msg)}
	}
	return resp, data, nil
}

// health asks a readiness or liveness endpoint: 200 is true, another
// status false, and an error only when no answer came.
func (c *httpClient) health(ctx context.Context, path string) (bool, error) {
	resp, _, err := c.do(ctx, http.MethodGet, path, nil, nil)
	if resp == nil {
		return false, err
	}
	return err == nil, nil
}

func (c *httpClient) Live(ctx context.Context) (bool, error) {
	return c.health(ctx, "/v2/health/live")
}

func (c *httpClient) Ready(ctx context.Context) (bool, error) {
	return c.health(ctx, "/v2/health/ready")
}

func (c *httpClient) ServerMetadata(ctx context.Context) (serve.ServerMetadata, error) {
	var md struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Extensions []string `json:"extensions"`
	}
	_, data, err := c.do(ctx, http.MethodGet, "/v2", nil, nil)
	if err == nil {
		err = json.Unmarshal(data, &md)
	}
	return serve.ServerMetadata{Name: md.Name, Version: md.Version, Extensions: md.Extensions}, err
}

func (c *httpClient) ModelReady(ctx context.Context, name, version string) (bool, error) {
	_, _, err := c.do(ctx, http.MethodGet, modelPath(name, version)+"/ready", nil, nil)
	if serve.CodeOf(err) == serve.CodeUnavailable || serve.CodeOf(err) == serve.CodeInvalidArgument {
		return false, nil
	}
	return err == nil, err
}

// jsonTensorMetadata is $metadata_tensor.
type jsonTensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

func (c *httpClient) ModelMetadata(ctx context.Context, name, version string) (serve.ModelMetadata, error) {
	var md struct {
		Name     string               `json:"name"`
		Versions []string             `json:"versions"`
		Platform string               `json:"platform"`
		Inputs   []jsonTensorMetadata `json:"inputs"`
		Outputs  []jsonTensorMetadata `json:"outputs"`
	}
	_, data, err := c.do(ctx, http.MethodGet, modelPath(name, version), nil, nil)
	if err == nil {
		err = json.Unmarshal(data, &md)
	}
	out := serve.ModelMetadata{Name: md.Name, Versions: md.Versions, Platform: md.Platform}
	for _, t := range md.Inputs {
		out.Inputs = append(out.Inputs, serve.TensorMetadata(t))
	}
	for _, t := range md.Outputs {
		out.Outputs = append(out.Outputs, serve.TensorMetadata(t))
	}
	return out, err
}

// jsonTensor is $request_input, $request_output and $response_output.
type jsonTensor struct {
	Name       string           `json:"name"`
	Shape      []int64          `json:"shape,omitempty"`
	Datatype   string           `json:"datatype,omitempty"`
	Parameters serve.Parameters `json:"parameters,omitempty"`
	Data       any              `json:"data,omitempty"`
}

// jsonInfer is $inference_request and $inference_response.
type jsonInfer struct {
	ModelName    string           `json:"model_name,omitempty"`
	ModelVersion string           `json:"model_version,omitempty"`
	ID           string           `json:"id,omitempty"`
	Parameters   serve.Parameters `json:"parameters,omitempty"`
	Inputs       []jsonTensor     `json:"inputs,omitempty"`
	Outputs      []jsonTensor     `json:"outputs,omitempty"`
}

// withParam returns a copy of p with key set to v.
func withParam(p serve.Parameters, key string, v any) serve.Parameters {
	out := make(serve.Parameters, len(p)+1)
	for k, x := range p {
		out[k] = x
	}
	out[key] = v
	return out
}

func (c *httpClient) Infer(ctx context.Context, req *serve.InferRequest) (*serve.InferResponse, error) {
	body := jsonInfer{ID: req.ID, Parameters: req.Parameters}
	var blobs [][]byte
	if !c.listed {
		body.Parameters = withParam(req.Parameters, "binary_data_output", true)
	}
	for i := range req.Inputs {
		in := &req.Inputs[i]
		jt := jsonTensor{Name: in.Name, Shape: in.Shape, Datatype: in.Datatype, Parameters: in.Parameters}
		if jt.Shape == nil {
			jt.Shape = []int64{}
		}
		t, err := in.Tensor()
		if err != nil {
			return nil, err
		}
		rt, err := serve.NewResponseTensor(in.Name, t, nil)
		if err != nil {
			return nil, err
		}
		if c.listed {
			jt.Data = rt.Values()
			if s, ok := jt.Data.([]string); ok && slices.ContainsFunc(s, func(e string) bool { return !utf8.ValidString(e) }) {
				return nil, fmt.Errorf("client: input %q: a BYTES element is not UTF-8, which JSON cannot carry: send it binary", in.Name)
			}
		} else {
			raw := rt.Raw()
			jt.Parameters = withParam(in.Parameters, "binary_data_size", int64(len(raw)))
			blobs = append(blobs, raw)
		}
		body.Inputs = append(body.Inputs, jt)
	}
	for _, o := range req.Outputs {
		body.Outputs = append(body.Outputs, jsonTensor{Name: o.Name, Parameters: o.Parameters})
	}
	head, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the request: %w", err)
	}
	header := http.Header{"Content-Type": {"application/json"}}
	if !c.listed {
		header = http.Header{"Content-Type": {"application/octet-stream"}, headerLength: {strconv.Itoa(len(head))}}
		for _, b := range blobs {
			head = append(head, b...)
		}
	}
	resp, data, err := c.do(ctx, http.MethodPost, modelPath(req.ModelName, req.ModelVersion)+"/infer", header, head)
	if err != nil {
		return nil, err
	}
	return decodeResponse(resp.Header.Get(headerLength), data)
}

// decodeResponse reads an $inference_response, and the outputs' binary
// data that follows it when n, the header length, is given.
func decodeResponse(n string, data []byte) (*serve.InferResponse, error) {
	var blobs []byte
	if n != "" {
		l, err := strconv.Atoi(n)
		if err != nil || l < 0 || l > len(data) {
			return nil, fmt.Errorf("client: %s %q for a body of %d bytes", headerLength, n, len(data))
		}
		data, blobs = data[:l], data[l:]
	}
	var r jsonInfer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("client: decoding the response: %w", err)
	}
	out := &serve.InferResponse{ModelName: r.ModelName, ModelVersion: r.ModelVersion, ID: r.ID, Parameters: numbers(r.Parameters)}
	for _, o := range r.Outputs {
		params := numbers(o.Parameters)
		rt := serve.RequestTensor{Name: o.Name, Datatype: o.Datatype, Shape: o.Shape}
		if rt.Shape == nil {
			rt.Shape = []int64{}
		}
		size, binary, err := params.Int64("binary_data_size")
		switch {
		case err != nil:
			return nil, fmt.Errorf("client: output %q: %w", o.Name, err)
		case binary && (size < 0 || size > int64(len(blobs))):
			return nil, fmt.Errorf("client: output %q: binary_data_size %d where %d bytes remain", o.Name, size, len(blobs))
		case binary:
			rt.Raw, blobs = blobs[:size], blobs[size:]
		default:
			if rt.Data, err = listed(o.Datatype, o.Data); err != nil {
				return nil, fmt.Errorf("client: output %q: %w", o.Name, err)
			}
		}
		t, err := rt.Tensor()
		if err != nil {
			return nil, fmt.Errorf("client: output %q: %w", o.Name, err)
		}
		ot, err := serve.NewResponseTensor(o.Name, t, params)
		if err != nil {
			return nil, err
		}
		out.Outputs = append(out.Outputs, ot)
	}
	return out, nil
}

// numbers replaces the json.Numbers of decoded parameters with int64s
// (whole numbers) or float64s.
func numbers(p serve.Parameters) serve.Parameters {
	for k, v := range p {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				p[k] = i
			} else {
				p[k], _ = n.Float64()
			}
		}
	}
	return p
}

// listed converts an output's JSON data (flat or nested in row-major
// order) to a slice RequestTensor.Data takes for the datatype.
func listed(datatype string, data any) (any, error) {
	var flat []any
	var walk func(v any)
	walk = func(v any) {
		if a, ok := v.([]any); ok {
			for _, e := range a {
				walk(e)
			}
			return
		}
		flat = append(flat, v)
	}
	walk(data)
	switch datatype {
	case "BOOL":
		out := make([]bool, len(flat))
		for i, v := range flat {
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("element %d: %v is not a bool", i, v)
			}
			out[i] = b
		}
		return out, nil
	case "BYTES":
		out := make([]string, len(flat))
		for i, v := range flat {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("element %d: %v is not a string", i, v)
			}
			out[i] = s
		}
		return out, nil
	case "UINT64":
		out := make([]uint64, len(flat))
		for i, v := range flat {
			n, ok := v.(json.Number)
			u, err := strconv.ParseUint(string(n), 10, 64)
			if !ok || err != nil {
				return nil, fmt.Errorf("element %d: %v is not a UINT64", i, v)
			}
			out[i] = u
		}
		return out, nil
	case "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32":
		out := make([]int64, len(flat))
		for i, v := range flat {
			n, ok := v.(json.Number)
			x, err := n.Int64()
			if !ok || err != nil {
				return nil, fmt.Errorf("element %d: %v is not an integer", i, v)
			}
			out[i] = x
		}
		return out, nil
	}
	out := make([]float64, len(flat))
	for i, v := range flat {
		f, err := float(v)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = f
	}
	return out, nil
}

// float reads a JSON number, or the strings "NaN", "Infinity" and
// "-Infinity" that some servers write for values JSON has no number for.
func float(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return x.Float64()
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// Close closes the idle connections of the client's HTTP client.
func (c *httpClient) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}
