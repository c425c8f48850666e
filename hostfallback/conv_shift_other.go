//go:build !amd64 || noasm

package hostfallback

// convShiftTile is convShiftF32's tile kernel: none in this build.
var convShiftTile convShiftKernel
