package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// ErrMissingInput is wrapped when a required graph input is not given.
var ErrMissingInput = errors.New("missing input")

// Executor runs one Plan. It is safe for concurrent use: every Run has its
// own Frame and arenas, taken from a pool.
type Executor struct {
	plan     *planner.Plan
	devices  map[string]Device
	segments []segment
	arenas   map[string]*sync.Pool
	// foreign lists memory that outputs must not share with the caller:
	// the plan's constants.
	foreign [][]byte
}

type segment struct {
	program  Program
	transfer *planner.Step
}

// NewExecutor compiles p for the given devices, which must include every
// device the plan names.
func NewExecutor(p *planner.Plan, devices []Device) (*Executor, error) {
	e := &Executor{plan: p, devices: map[string]Device{}, arenas: map[string]*sync.Pool{}}
	for _, d := range devices {
		e.devices[d.Name()] = d
	}
	for i := 0; i < len(p.Steps); {
		st := &p.Steps[i]
		if st.Kind == planner.Transfer {
			for _, name := range []string{st.From, st.To} {
				if e.devices[name] == nil {
					return nil, fmt.Errorf("backend: plan transfers to or from device %q, which is not open: %w", name, ErrDeviceUnavailable)
				}
			}
			e.segments = append(e.segments, segment{transfer: st})
			i++
			continue
		}
		j := i + 1
		for j < len(p.Steps) && p.Steps[j].Kind == planner.Compute && p.Steps[j].Device == st.Device {
			j++
		}
		dev := e.devices[st.Device]
		if dev == nil {
			return nil, fmt.Errorf("backend: plan places %s on device %q, which is not open: %w", st.Node, st.Device, ErrDeviceUnavailable)
		}
		prog, err := dev.Compile(p, p.Steps[i:j])
		if err != nil {
			return nil, fmt.Errorf("backend: compiling steps %d..%d for %s: %w", i, j-1, st.Device, err)
		}
		e.segments = append(e.segments, segment{program: prog})
		i = j
	}
	for dev, size := range p.ArenaBytes {
		e.arenas[dev] = &sync.Pool{New: func() any { return graph.AllocBytes(size) }}
	}
	for _, t := range p.Constants {
		e.foreign = append(e.foreign, t.Data)
	}
	return e, nil
}

// Plan returns the executor's plan.
func (e *Executor) Plan() *planner.Plan { return e.plan }

// Run executes the plan on inputs (by graph input name) and returns the
// graph outputs by name. Graph inputs with an initializer may be omitted.
// The returned values are owned by the caller. ctx is checked between
// steps.
func (e *Executor) Run(ctx context.Context, inputs map[string]graph.Value) (map[string]graph.Value, error) {
	p := e.plan
	f := &Frame{Plan: p, Values: map[string][]graph.Value{}, Arenas: map[string][]byte{}}
	for name := range e.devices {
		f.Values[name] = make([]graph.Value, len(p.Values))
	}
	host := f.Values[planner.HostDevice]
	if host == nil {
		host = make([]graph.Value, len(p.Values))
		f.Values[planner.HostDevice] = host
	}
	for i, t := range p.Constants {
		host[i] = t
	}
	// Clipped so that appending copies: e.foreign is shared by concurrent Runs.
	foreign := slices.Clip(e.foreign)
	for _, i := range p.Inputs {
		v, ok := inputs[p.Values[i]]
		if !ok {
			if host[i] == nil {
				return nil, fmt.Errorf("backend: model %q: input %q: %w", p.Model.Name, p.Values[i], ErrMissingInput)
			}
			continue
		}
		host[i] = v
		if t, ok := v.(*graph.Tensor); ok {
			foreign = append(foreign, t.Data)
		}
	}
	for dev, pool := range e.arenas {
		f.Arenas[dev] = pool.Get().([]byte)
	}
	defer func() {
		for dev, pool := range e.arenas {
			pool.Put(f.Arenas[dev])
		}
	}()
	tr := TraceFrom(ctx)
	for _, s := range e.segments {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.transfer != nil {
			var t0 time.Duration
			if tr != nil {
				t0 = tr.Now()
			}
			if err := e.transfer(f, s.transfer); err != nil {
				return nil, err
			}
			if tr != nil {
				st := s.transfer
				tr.Add(TraceEvent{Name: "transfer " + p.Values[st.In[0]] + " " + st.From + "→" + st.To, Op: "transfer",
					Device: st.To, Start: t0, Dur: tr.Now() - t0, Bytes: st.Bytes})
			}
			continue
		}
		if err := s.program.Run(ctx, f); err != nil {
			return nil, err
		}
	}
	for _, a := range f.Arenas {
		foreign = append(foreign, a)
	}
	out := make(map[string]graph.Value, len(p.Outputs))
	for _, i := range p.Outputs {
		v := host[i]
		if v == nil {
			return nil, fmt.Errorf("backend: model %q: output %q was not computed", p.Model.Name, p.Values[i])
		}
		out[p.Values[i]] = ownValue(v, foreign)
	}
	return out, nil
}

func (e *Executor) transfer(f *Frame, st *planner.Step) error {
	v := f.Values[st.From][st.In[0]]
	if v == nil {
		return nil
	}
	var err error
	if st.To == planner.HostDevice {
		v, err = e.devices[st.From].Download(v)
	} else {
		v, err = e.devices[st.To].Upload(v)
	}
	if err != nil {
		return fmt.Errorf("backend: moving %q from %s to %s: %w", f.Plan.Values[st.In[0]], st.From, st.To, err)
	}
	f.Values[st.To][st.In[0]] = v
	return nil
}

// ownValue returns v, or a copy of it where it shares memory with any of
// the foreign buffers (arenas, weights, the caller's inputs).
func ownValue(v graph.Value, foreign [][]byte) graph.Value {
	switch x := v.(type) {
	case *graph.Tensor:
		for _, b := range foreign {
			if Overlaps(x.Data, b) {
				return x.Clone()
			}
		}
		return x
	case *graph.Sequence:
		items := make([]graph.Value, len(x.Items))
		for i, it := range x.Items {
			items[i] = ownValue(it, foreign)
		}
		return &graph.Sequence{Elem: x.Elem, Items: items}
	case *graph.Optional:
		if x.V == nil {
			return x
		}
		return &graph.Optional{Elem: x.Elem, V: ownValue(x.V, foreign)}
	}
	return v
}

// Overlaps reports whether two byte slices share memory.
func Overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}
