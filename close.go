package onnxvk

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// calls counts the calls in progress on a session (Runs, Verify, Plan) and
// lets Close stop them and wait for them.
type calls struct {
	mu sync.Mutex
	// n counts the calls in progress; closing is set by Close, after
	// which no call starts; idle is closed when n drops to 0 while
	// closing.
	n       int
	closing bool
	idle    chan struct{}
	// stop is cancelled by Close: each call's context follows it.
	stop   context.Context
	cancel context.CancelFunc
}

func newCalls() calls {
	stop, cancel := context.WithCancel(context.Background())
	return calls{idle: make(chan struct{}), stop: stop, cancel: cancel}
}

// enter starts a call: it fails with ErrClosed once Close has begun, and
// otherwise returns the call's context, which Close cancels, and leave,
// which ends the call and turns its error into ErrClosed where Close
// stopped it.
func (s *Session) enter(ctx context.Context) (context.Context, func(error) error, error) {
	c := &s.calls
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil, nil, fmt.Errorf("onnxvk: model %q: %w", s.model.Name, ErrClosed)
	}
	c.n++
	c.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(c.stop, func() { cancel(ErrClosed) })
	leave := func(err error) error {
		unhook()
		if err != nil && errors.Is(context.Cause(ctx), ErrClosed) {
			err = fmt.Errorf("onnxvk: model %q: the session was closed during the call (%v): %w", s.model.Name, err, ErrClosed)
		}
		cancel(nil)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.n--; c.n == 0 && c.closing {
			close(c.idle)
		}
		return err
	}
	return ctx, leave, nil
}

// Close stops the calls in progress (Runs, RunBatch, Verify and Plan;
// a Run fails with ErrClosed at its next step), waits for them to return,
// then releases the session's plans, devices and the model's memory
// mappings. Every call that starts after Close has begun fails with
// ErrClosed. A second Close waits for the first to finish and returns
// nil.
func (s *Session) Close() error {
	first := false
	s.closeOnce.Do(func() {
		first = true
		s.closeErr = s.close()
	})
	if !first {
		return nil
	}
	return s.closeErr
}

func (s *Session) close() error {
	c := &s.calls
	c.mu.Lock()
	c.closing = true
	busy := c.n > 0
	c.mu.Unlock()
	c.cancel()
	if busy {
		<-c.idle
	}
	s.mu.Lock()
	s.plans.clear()
	s.mu.Unlock()
	var errs []error
	for _, d := range s.devices {
		errs = append(errs, d.Close())
	}
	errs = append(errs, s.model.Close())
	return errors.Join(errs...)
}
