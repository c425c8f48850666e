//go:build !noasm

package hostfallback

// gemmNEON is the 6×16 kernel of arm64 (Advanced SIMD): see
// sgemm_arm64.s.
//
//go:noescape
func gemmNEON(kc int, a, b, c *float32, ldc int, add bool, bias *float32)

// gemmNEONDirect is gemmNEON reading A unpacked, rows lda floats apart.
//
//go:noescape
func gemmNEONDirect(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)

// gemmWarm asks the CPU to bring lines cache lines from p on into L1, ahead
// of their use: it never faults, whatever p points at.
//
//go:noescape
func gemmWarm(p *float32, lines int)

// sgemmVariants lists the kernels of arm64, fastest first; the portable
// one is last. Advanced SIMD is part of every arm64 CPU.
func sgemmVariants() []sgemmVariant {
	return []sgemmVariant{
		{&sgemmKernel{name: "neon-6x16", mr: 6, nr: 16, ku: 1, mc: 96, tile: gemmNEON, direct: gemmNEONDirect, warm: gemmWarm}, []string{"asimd"}, true},
		{gemmGo, nil, true},
	}
}

// gemmDot is Σ a[i]·b[i] over len(a) ≤ len(b) values.
func gemmDot(a, b []float32) float32 { return gemmDotGo(a, b) }
