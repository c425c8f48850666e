//go:build !linux

package onnxvk

// physicalMemory is unknown here: there is no default host memory limit.
func physicalMemory() int64 { return 0 }
