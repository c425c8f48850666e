package vulkan

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
)

// DeviceTensor is a tensor in the device's memory between Runs (a
// backend.Resident): an output a Run kept on the device, which a later
// Run on the same device reads in place. Its memory comes from the
// device's pool of tensor buffers and goes back there on Release; Close
// frees it.
type DeviceTensor struct {
	d    *Device
	typ  *graph.Type
	size uint64
	// passing is set on a tensor that passes a value from one segment of
	// a Run to a later one on the same device: the step that reads it last
	// releases it, and the garbage collector, through cleanup, where the
	// Run failed before.
	passing bool
	cleanup runtime.Cleanup

	mu  sync.Mutex
	buf *buffer
}

// transient marks t as passing a value within a Run (see passing).
func (t *DeviceTensor) transient() {
	t.passing = true
	p := &t.d.tensors
	t.cleanup = runtime.AddCleanup(t, p.put, t.buf)
}

var _ backend.Resident = (*DeviceTensor)(nil)

// ValueType describes the tensor.
func (t *DeviceTensor) ValueType() *graph.Type { return t.typ }

// DeviceName names the device that holds the tensor.
func (t *DeviceTensor) DeviceName() string { return t.d.name }

// Read copies the tensor to a new host tensor. It fails once the tensor
// is released or its device closed.
func (t *DeviceTensor) Read() (*graph.Tensor, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := graph.NewTensor(t.typ.Elem, t.typ.Shape.Ints())
	p := &t.d.tensors
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.buf == nil || !p.live[t.buf] {
		return nil, fmt.Errorf("vulkan: a tensor of %s read after its Release or the device's Close", t.d.name)
	}
	if err := t.d.read(t.buf, out.Data); err != nil {
		return nil, t.d.fault(err)
	}
	return out, nil
}

// Release gives the tensor's memory back to the device's pool.
func (t *DeviceTensor) Release() {
	t.mu.Lock()
	b := t.buf
	t.buf = nil
	t.mu.Unlock()
	if t.passing {
		t.cleanup.Stop()
	}
	if b != nil {
		t.d.tensors.put(b)
	}
}

// buffer returns the tensor's memory, nil once released or its device
// closed.
func (t *DeviceTensor) buffer() *buffer {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := &t.d.tensors
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.buf == nil || !p.live[t.buf] {
		return nil
	}
	return t.buf
}

// tensorPool holds the device-local buffers of DeviceTensors by size
// class (powers of two from 256 bytes), so that a decoder whose cache
// grows by one step each Run reuses memory instead of allocating.
type tensorPool struct {
	mu     sync.Mutex
	closed bool
	spare  map[uint64][]*buffer
	// live counts the buffers handed out, which Close frees too.
	live map[*buffer]bool
}

// sizeClass is the buffer size that holds n bytes.
func sizeClass(n uint64) uint64 {
	return max(256, uint64(1)<<bits.Len64(max(n, 1)-1))
}

// tensorBuffer returns a device-local buffer of at least n bytes from the
// device's pool of DeviceTensor memory.
func (d *Device) tensorBuffer(n uint64) (*buffer, error) {
	p := &d.tensors
	class := sizeClass(n)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("vulkan: %s is closed", d.name)
	}
	if free := p.spare[class]; len(free) > 0 {
		b := free[len(free)-1]
		p.spare[class] = free[:len(free)-1]
		p.live[b] = true
		p.mu.Unlock()
		return b, nil
	}
	p.mu.Unlock()
	b, err := d.newBuffer(class, false)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		b.free(d.dev)
		return nil, fmt.Errorf("vulkan: %s is closed", d.name)
	}
	if p.live == nil {
		p.live, p.spare = map[*buffer]bool{}, map[uint64][]*buffer{}
	}
	p.live[b] = true
	return b, nil
}

// put returns b to the pool; after close it is already freed.
func (p *tensorPool) put(b *buffer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !p.live[b] {
		return
	}
	delete(p.live, b)
	p.spare[b.size] = append(p.spare[b.size], b)
}

// close frees every buffer of the pool, handed out or spare.
func (p *tensorPool) close(dev uintptr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for b := range p.live {
		b.free(dev)
	}
	for _, free := range p.spare {
		for _, b := range free {
			b.free(dev)
		}
	}
	p.live, p.spare = nil, nil
}

// read copies the first len(dst) bytes of device buffer b to dst: through
// b's mapping where the host can read it, else through a staging buffer.
func (d *Device) read(b *buffer, dst []byte) error {
	n := uint64(len(dst))
	d.counters.hostDeviceBytes.Add(int64(n))
	if b.hostReadable() {
		copy(dst, b.mapped[:n])
		return nil
	}
	staging, err := d.newBuffer(n, true)
	if err != nil {
		return err
	}
	defer staging.free(d.dev)
	if err := d.copyOnce(b, staging, n); err != nil {
		return err
	}
	copy(dst, staging.mapped[:n])
	return nil
}
