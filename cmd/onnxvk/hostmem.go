package main

import (
	"flag"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/onnxvk/onnxvk"
)

// hostMemoryFlag is the --host-memory flag of run and bench: the session's
// host memory limit (onnxvk.WithHostMemoryLimit).
type hostMemoryFlag struct{ value *string }

func addHostMemoryFlag(fs *flag.FlagSet) hostMemoryFlag {
	return hostMemoryFlag{fs.String("host-memory", "", "host memory limit of a run, `SIZE` in bytes or with a K, M, G or T suffix (powers of 1024); 0 for none (default: three quarters of the machine's memory)")}
}

// options returns the session option the flag asks for, or a usage error.
// It also sets Go's soft memory limit (debug.SetMemoryLimit) to the host
// memory limit, so that the collector frees garbage before live values
// and garbage together pass it (under an address space limit, prlimit
// --as, the runtime dies when it cannot map more), and returns the
// function that restores the previous soft limit.
func (f hostMemoryFlag) options() ([]onnxvk.Option, func(), error) {
	n := onnxvk.DefaultHostMemoryLimit()
	var opts []onnxvk.Option
	if *f.value != "" {
		var err error
		if n, err = parseSize(*f.value); err != nil {
			return nil, nil, usagef("--host-memory %q: want a size in bytes, such as 4096, 512M or 8G", *f.value)
		}
		opts = []onnxvk.Option{onnxvk.WithHostMemoryLimit(n)}
	}
	if n <= 0 {
		return opts, func() {}, nil
	}
	prev := debug.SetMemoryLimit(n)
	return opts, func() { debug.SetMemoryLimit(prev) }, nil
}

// parseSize reads a non-negative byte count with an optional K, M, G or T
// suffix (powers of 1024), refusing one that overflows int64.
func parseSize(s string) (int64, error) {
	shift := 0
	if i := strings.IndexAny(strings.ToUpper(s), "KMGT"); i >= 0 && i == len(s)-1 {
		shift = 10 * (1 + strings.IndexByte("KMGT", strings.ToUpper(s)[i]))
		s = s[:i]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<63-1)>>shift {
		return 0, strconv.ErrRange
	}
	return n << shift, nil
}
