package graph

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"unsafe"
)

// ErrMappedFileChanged is wrapped by the error for a read of a
// memory-mapped model or weight file that faulted: the file was truncated
// (or replaced in place) while mapped, during Load or after it, so the
// pages behind its bytes are gone.
var ErrMappedFileChanged = errors.New("a memory-mapped model or weight file was truncated or changed while mapped")

// Mapping is a file mapped into memory whose bytes tensors use in place.
// While registered, a memory fault in its range is reported by FaultError
// and CatchFaults as an error naming the file and the tensor instead of
// killing the process.
type Mapping struct {
	file   string
	lo, hi uintptr
	mu     sync.Mutex
	// tensors are the named ranges of tensors that use the mapping.
	tensors []mappedRange
}

type mappedRange struct {
	lo, hi uintptr
	name   string
}

// mappings holds the registered mappings.
var mappings struct {
	sync.Mutex
	list []*Mapping
}

// span returns the address range of b.
func span(b []byte) (lo, hi uintptr) {
	if len(b) == 0 {
		return 0, 0
	}
	lo = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return lo, lo + uintptr(len(b))
}

// RegisterMapping registers data, the mapping of file, until Unregister.
func RegisterMapping(data []byte, file string) *Mapping {
	m := &Mapping{file: file}
	m.lo, m.hi = span(data)
	mappings.Lock()
	mappings.list = append(mappings.list, m)
	mappings.Unlock()
	return m
}

// AddTensor records that the tensor called name uses data, a part of the
// mapping, so that a fault there names it.
func (m *Mapping) AddTensor(name string, data []byte) {
	lo, hi := span(data)
	m.mu.Lock()
	m.tensors = append(m.tensors, mappedRange{lo, hi, name})
	m.mu.Unlock()
}

// Unregister forgets m; call it before unmapping.
func (m *Mapping) Unregister() {
	mappings.Lock()
	mappings.list = slices.DeleteFunc(mappings.list, func(x *Mapping) bool { return x == m })
	mappings.Unlock()
}

// FaultError returns the error for p, a value recovered from a panic, when
// p is a memory fault (raised as a panic under debug.SetPanicOnFault) at an
// address in a registered mapping, and nil otherwise.
func FaultError(p any) error {
	f, ok := p.(interface {
		error
		Addr() uintptr
	})
	if !ok {
		return nil
	}
	addr := f.Addr()
	mappings.Lock()
	defer mappings.Unlock()
	for _, m := range mappings.list {
		if addr < m.lo || addr >= m.hi {
			continue
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, t := range m.tensors {
			if addr >= t.lo && addr < t.hi {
				return fmt.Errorf("reading tensor %q at byte %d of %s: %w", t.name, addr-m.lo, m.file, ErrMappedFileChanged)
			}
		}
		return fmt.Errorf("reading byte %d of %s: %w", addr-m.lo, m.file, ErrMappedFileChanged)
	}
	return nil
}

// CatchFaults calls f with memory faults raised as panics on this
// goroutine (debug.SetPanicOnFault) and returns, for a fault in a
// registered mapping, FaultError's error instead of f's. Other panics go
// on. Goroutines that f starts need their own CatchFaults (or
// SetPanicOnFault, handing the panic back to this one).
func CatchFaults(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if err = FaultError(p); err == nil {
				panic(p)
			}
		}
	}()
	return f()
}
