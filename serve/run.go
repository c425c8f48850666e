package serve

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Run serves s through the frontends until ctx ends (a signal) or one of
// them fails, then shuts down gracefully: the server stops reporting
// ready, every frontend stops accepting and answers what it accepted
// within drain, and the models close. It returns nil after a clean drain.
func Run(ctx context.Context, s *Server, frontends []Frontend, drain time.Duration) error {
	failed := make(chan error, len(frontends))
	for _, f := range frontends {
		go func() {
			if err := f.Serve(); err != nil {
				failed <- fmt.Errorf("serve: %s: %w", f.Addr(), err)
			}
		}()
		s.log.Info("serving", "addr", f.Addr())
	}
	var err error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down", "cause", context.Cause(ctx).Error(), "drain_timeout", drain.String())
	case err = <-failed:
		s.log.Error("a frontend failed; shutting down", "err", err)
	}
	s.Drain()
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	errs := make(chan error, len(frontends))
	for _, f := range frontends {
		go func() { errs <- f.Shutdown(dctx) }()
	}
	for range frontends {
		if e := <-errs; e != nil {
			err = errors.Join(err, fmt.Errorf("serve: draining within %v: %w", drain, e))
		}
	}
	s.Close()
	totals := s.metrics.totals()
	var n int64
	for _, k := range totals {
		n += k
	}
	if err == nil {
		s.log.Info("stopped: every accepted request was answered", "requests", n, "ok", totals[CodeOK])
	}
	return err
}
