package main

import (
	"flag"

	"github.com/onnxvk/onnxvk"
)

// threadsFlag is the --threads flag of run and bench: the session's thread
// budget (onnxvk.WithThreads).
type threadsFlag struct{ value *int }

func addThreadsFlag(fs *flag.FlagSet) threadsFlag {
	return threadsFlag{fs.Int("threads", 0, "compute the CPU kernels of a run on at most `N` goroutines; 0 for GOMAXPROCS")}
}

// options returns the session option the flag asks for, or a usage error.
func (f threadsFlag) options() ([]onnxvk.Option, error) {
	if *f.value < 0 {
		return nil, usagef("--threads %d: want 0 (GOMAXPROCS) or more", *f.value)
	}
	return []onnxvk.Option{onnxvk.WithThreads(*f.value)}, nil
}
