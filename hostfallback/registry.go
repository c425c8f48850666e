// Package hostfallback holds onnxvk's CPU kernels: the device that runs
// whatever a GPU cannot, and the reference every GPU kernel is checked
// against.
//
// Each op family registers its kernels from an init function in its own
// file; there is no central switch.
package hostfallback

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/hostmem"
	"github.com/onnxvk/onnxvk/planner"
)

// ErrUnsupported is wrapped by kernels for attribute values, types or
// versions they do not implement.
var ErrUnsupported = errors.New("unsupported")

// Kernel runs one node. It reads c.In and sets every present output in
// c.Out, allocating tensors with c.Output.
type Kernel func(c *Call) error

// Call is one execution of a node.
type Call struct {
	Node *graph.Node
	// Opset is the model's import version of the node's domain; kernels
	// switch on it where an op's semantics changed between versions.
	Opset int64
	In    []graph.Value
	Out   []graph.Value
	// Alloc, when set, provides the storage for output i (the executor's
	// arena); it returns nil when it has none of that size.
	Alloc func(i int, dt graph.DType, shape []int64) *graph.Tensor
	// RunGraph runs a subgraph attribute of the node with the given values
	// bound to its inputs (outer-scope values are resolved by the executor)
	// and returns its outputs. Control-flow kernels use it.
	RunGraph func(g *graph.Graph, inputs []graph.Value) ([]graph.Value, error)
	// Threads is the thread budget of the kernel's parallel loops (nil:
	// the whole pool).
	Threads *Threads

	// memo is the step's plan cache and consts marks its constant inputs,
	// both set by a compiled program (see Memo); key is ShapeKey's buffer.
	memo   *stepMemo
	consts []bool
	key    []int64
	// limit is the plan's host memory limit (0: none) and planned what
	// the plan takes of it (planner.Plan.HostMemoryLimit, HostBytes).
	limit, planned int64
	// sub marks a call of a subgraph run (runGraph), whose outputs no
	// plan sized: Output checks each it allocates against the limit
	// beside the plan's memory and held, the bytes of the values the
	// subgraph run holds (its inputs and its nodes' outputs so far).
	sub  bool
	held int64
}

// outOfMemory is the panic Output raises, for the kernel's guard to
// return as the call's error, when a subgraph's output does not fit.
type outOfMemory struct{ error }

// mustFit panics with an outOfMemory when c is a call of a subgraph run
// and an output of type dt and the given shape does not fit in the host
// memory limit beside the plan and what the run holds (see Check).
func (c *Call) mustFit(dt graph.DType, shape []int64) {
	if !c.sub {
		return
	}
	n, err := graph.Bytes(dt, shape)
	if err != nil {
		err = c.Errorf("output of %s: %w", dt, err)
	} else if err = c.mappable(n, fmt.Sprintf("output %s%v", dt, shape)); err == nil {
		err = c.overLimit(c.held+n, fmt.Sprintf("output %s%v beside the %d bytes its subgraph run holds", dt, shape, c.held))
	}
	if err != nil {
		panic(outOfMemory{err})
	}
}

// Check returns an error, before anything is allocated, when a tensor of
// type dt and the given shape is one graph.Bytes refuses (a negative or
// overflowing size), or does not fit in the host memory limit beside the
// plan's own memory (an error wrapping backend.ErrOutOfMemory). Kernels whose
// output sizes come from data (a shape, a scale, a count read at run time)
// or grow (Loop scan outputs, sequences) check them with it.
func (c *Call) Check(dt graph.DType, shape []int64) error {
	n, err := graph.Bytes(dt, shape)
	if err != nil {
		return c.Errorf("output of %s: %w", dt, err)
	}
	if !c.over(n) {
		return nil // without formatting the name: a Sprintf costs more than many small kernels
	}
	return c.CheckBytes(n, fmt.Sprintf("%s%v", dt, shape))
}

// over reports whether n bytes beside the plan's exceed the host memory
// limit, or are a block too large for the address space left (see
// mappable).
func (c *Call) over(n int64) bool {
	return c.limit > 0 && n > c.limit-c.planned || n >= mappableFrom && c.mappable(n, "") != nil
}

// CheckBytes is Check for n bytes made of several tensors (a sequence,
// the iterations of a scan output); what names them in the error.
func (c *Call) CheckBytes(n int64, what string) error {
	if err := c.overLimit(n, what); err != nil {
		return err
	}
	return c.mappable(n, what)
}

// overLimit returns an error when n bytes beside the plan's exceed the
// host memory limit.
func (c *Call) overLimit(n int64, what string) error {
	if c.limit > 0 && n > c.limit-c.planned {
		return c.Errorf("%s needs %d bytes, over the host memory limit of %d bytes (the plan takes %d): %w",
			what, n, c.limit, c.planned, backend.ErrOutOfMemory)
	}
	return nil
}

// mappableFrom is the smallest block mappable checks: a smaller one costs
// less than reading the process's status.
const mappableFrom = 8 << 20

// mappable returns an error when the process runs under an address space
// limit (prlimit --as) and a new block of n bytes, from mappableFrom up,
// takes more than half of what the limit leaves now: the host memory limit
// is fixed at load from what the limit left then, but threads started
// since, the collector's garbage and the heap's fragments (Go keeps the
// address space it maps, and a large block needs a fresh contiguous range)
// take more of it during a Run, and mapping past the limit kills the
// process instead of failing the Run.
func (c *Call) mappable(n int64, what string) error {
	if n < mappableFrom {
		return nil
	}
	left, ok := hostmem.AddressSpaceLeft()
	if !ok || n <= left/2 {
		return nil
	}
	return c.Errorf("%s needs %d bytes, over half of the %d bytes the address space limit leaves: %w",
		what, n, left, backend.ErrOutOfMemory)
}

// Tensor returns input i as a tensor, or nil when it is absent.
func (c *Call) Tensor(i int) *graph.Tensor {
	if i >= len(c.In) || c.In[i] == nil {
		return nil
	}
	t, _ := c.In[i].(*graph.Tensor)
	return t
}

// Output allocates output i with the given type and shape, zero-filled,
// stores it in c.Out and returns it. The storage may be a slot of the
// executor's arena, so a kernel must not keep it past the call.
func (c *Call) Output(i int, dt graph.DType, shape []int64) *graph.Tensor {
	var t *graph.Tensor
	if c.Alloc != nil && dt != graph.String {
		t = c.Alloc(i, dt, shape)
	}
	if t != nil {
		clear(t.Data)
	} else {
		c.mustFit(dt, shape)
		t = graph.NewTensor(dt, shape)
	}
	c.Out[i] = t
	return t
}

// OutputUninit is Output without the zero-fill of arena storage: the
// tensor may hold a previous value's bytes, so the kernel must write every
// element. Kernels whose loops provably do (GEMM with beta 0, elementwise
// maps, activations, transposes) use it to skip a pass over the output.
func (c *Call) OutputUninit(i int, dt graph.DType, shape []int64) *graph.Tensor {
	var t *graph.Tensor
	if c.Alloc != nil && dt != graph.String {
		t = c.Alloc(i, dt, shape)
	}
	if t == nil {
		c.mustFit(dt, shape)
		t = graph.NewTensor(dt, shape)
	}
	c.Out[i] = t
	return t
}

// Errorf returns an error naming the call's node.
func (c *Call) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", c.Node, fmt.Errorf(format, args...))
}

// Unsupported returns an ErrUnsupported error naming the node and what is
// not supported.
func (c *Call) Unsupported(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", c.Node, fmt.Sprintf(format, args...), ErrUnsupported)
}

type key struct{ domain, op string }

// Support is what a kernel accepts, registered with it (RegisterChecked):
// the CPU device answers Supports from it at planning, and the registry
// checks the types again when the kernel runs, so the kernel need not.
type Support struct {
	// In holds the element types each tensor input accepts, by position;
	// the last entry also covers the inputs after it (variadic ops), and
	// a nil entry accepts any type.
	In []Types
	// Check, when set, returns why the kernel cannot run the node q
	// describes (an attribute value or constant input it does not
	// implement), or "" when it can.
	Check func(q planner.Query) string
}

// Types is a set of element types.
type Types []graph.DType

// Has reports whether dt is in ts.
func (ts Types) Has(dt graph.DType) bool { return slices.Contains(ts, dt) }

// String lists the types.
func (ts Types) String() string {
	names := make([]string, len(ts))
	for i, dt := range ts {
		names[i] = dt.String()
	}
	return strings.Join(names, ", ")
}

// types returns the set input i accepts, nil for any.
func (s *Support) types(i int) Types {
	if len(s.In) == 0 {
		return nil
	}
	return s.In[min(i, len(s.In)-1)]
}

// refuseType returns why input i of element type dt is refused, or "".
func (s *Support) refuseType(i int, dt graph.DType) string {
	if ts := s.types(i); ts != nil && !ts.Has(dt) {
		return fmt.Sprintf("input %d of element type %s (the CPU kernel takes %s)", i, dt, ts)
	}
	return ""
}

// decline returns why the kernel cannot run the node q describes, or "".
// Inputs of unknown type pass: the kernel refuses them when it runs.
func (s *Support) decline(q planner.Query) string {
	for i, t := range q.Inputs {
		if t != nil && t.Kind == graph.TensorKind && t.Elem != graph.Undefined {
			if r := s.refuseType(i, t.Elem); r != "" {
				return r
			}
		}
	}
	if s.Check != nil {
		return s.Check(q)
	}
	return ""
}

// checked returns k preceded by the checks of s, for the inputs whose
// types planning did not know and for subgraphs' nodes, which run
// unplanned; Check then sees no constant inputs.
func (s *Support) checked(k Kernel) Kernel {
	return func(c *Call) error {
		for i, v := range c.In {
			if t, ok := v.(*graph.Tensor); ok {
				if r := s.refuseType(i, t.DType); r != "" {
					return c.Unsupported("%s", r)
				}
			}
		}
		if s.Check != nil {
			if r := s.Check(planner.Query{Node: c.Node, Opset: c.Opset}); r != "" {
				return c.Unsupported("%s", r)
			}
		}
		return k(c)
	}
}

type entry struct {
	kernel  Kernel
	support *Support
}

var (
	mu      sync.RWMutex
	kernels = map[key]entry{}
)

// Register adds the kernel for op in the default ONNX domain. The kernel
// handles every opset version (switching on Call.Opset where needed).
// It panics on a duplicate registration, a programming error.
func Register(op string, k Kernel) { RegisterDomain(graph.DefaultDomain, op, k) }

// RegisterDomain is Register for another operator domain.
func RegisterDomain(domain, op string, k Kernel) { register(domain, op, k, nil) }

// RegisterChecked is Register for a kernel that accepts only what s
// describes.
func RegisterChecked(op string, k Kernel, s Support) {
	RegisterDomainChecked(graph.DefaultDomain, op, k, s)
}

// RegisterDomainChecked is RegisterChecked for another operator domain.
func RegisterDomainChecked(domain, op string, k Kernel, s Support) {
	register(domain, op, s.checked(k), &s)
}

func register(domain, op string, k Kernel, s *Support) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kernels[key{domain, op}]; dup {
		panic(fmt.Sprintf("hostfallback: kernel for %s.%s registered twice", domain, op))
	}
	kernels[key{domain, op}] = entry{guard(k), s}
}

// Decline returns why the CPU cannot run the node q describes: no kernel
// for its op, or an input type, attribute or constant input its kernel's
// Support refuses; "" when it can.
func Decline(q planner.Query) string {
	mu.RLock()
	e, ok := kernels[key{q.Node.Domain, q.Node.OpType}]
	mu.RUnlock()
	switch {
	case !ok:
		return "no CPU kernel for " + q.Node.OpType
	case e.support == nil:
		return ""
	}
	return e.support.decline(q)
}

// guard returns k with a panic turned into an error naming the node: a
// kernel that panics on a case it fails to check (a bug) fails the call,
// and with it the Run, never the process. An output that does not fit
// (Call.mustFit) returns its error. A fault in mapped weights whose
// file changed keeps its own error (graph.FaultError). Whatever calls a kernel (a
// plan's steps, a subgraph's nodes) gets it through Lookup, guarded.
func guard(k Kernel) Kernel {
	return func(c *Call) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if oom, ok := r.(outOfMemory); ok {
					err = oom.error
					return
				}
				if err = graph.FaultError(r); err == nil {
					err = fmt.Errorf("kernel panic: %v", r)
				}
				err = fmt.Errorf("%s: %w", c.Node, err)
			}
		}()
		return k(c)
	}
}

// Lookup returns the kernel for op in domain, or nil. The kernel returns
// an error where it would panic (see guard).
func Lookup(domain, op string) Kernel {
	mu.RLock()
	defer mu.RUnlock()
	return kernels[key{domain, op}].kernel
}

// KernelInfo describes a registered kernel: its op and the element types
// its Support admits for each input (the last entry also covers the inputs
// after it; a nil entry admits any type). In is nil for a kernel
// registered without a Support, which checks the types itself; Checked
// tells that its Support also checks attributes or constant inputs.
type KernelInfo struct {
	Domain, Op string
	In         []Types
	Checked    bool
}

// Kernels returns every registered kernel, sorted by domain and op.
func Kernels() []KernelInfo {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]KernelInfo, 0, len(kernels))
	for k, e := range kernels {
		info := KernelInfo{Domain: k.domain, Op: k.op}
		if e.support != nil {
			info.In, info.Checked = e.support.In, e.support.Check != nil
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b KernelInfo) int {
		return cmp.Or(cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.Op, b.Op))
	})
	return out
}

// Ops returns the number of registered kernels.
func Ops() int {
	mu.RLock()
	defer mu.RUnlock()
	return len(kernels)
}
