//go:build !noasm

package hostfallback

import "os"

// The amd64 micro-kernels are in sgemm_amd64.s; the CPU features that they
// need are probed here with CPUID and XGETBV (the OS must save the wider
// registers on a context switch, which XCR0 tells).

// cpuid executes CPUID for a leaf and sub-leaf.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xgetbv reads XCR0, the OS-enabled register state; call it only where
// CPUID reports OSXSAVE.
func xgetbv() (eax, edx uint32)

// gemmAVX2 is the 6×16 AVX2+FMA tile (twelve ymm accumulators).
//
//go:noescape
func gemmAVX2(kc int, a, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX512 is the 8×32 AVX-512F tile (sixteen zmm accumulators, A
// broadcast from memory).
//
//go:noescape
func gemmAVX512(kc int, a, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX2Direct is gemmAVX2 reading A unpacked, rows lda floats apart.
//
//go:noescape
func gemmAVX2Direct(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX512Direct is gemmAVX512 reading A unpacked, rows lda floats apart.
//
//go:noescape
func gemmAVX512Direct(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX2Direct4 is gemmAVX2Direct for 4 rows of A (a 4×16 tile).
//
//go:noescape
func gemmAVX2Direct4(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX2Direct2 is gemmAVX2Direct for 2 rows of A (a 2×16 tile).
//
//go:noescape
func gemmAVX2Direct2(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX2Half is gemmAVX2 for the first 8 of the 16 columns of the B
// strip only (a 6×8 tile, two k-steps at a time): an edge strip of at
// most 8 columns.
//
//go:noescape
func gemmAVX2Half(kc int, a, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX2HalfDirect is gemmAVX2Half reading A unpacked, rows lda floats
// apart.
//
//go:noescape
func gemmAVX2HalfDirect(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX512Half is gemmAVX512 for the first 16 of the 32 columns of the
// B strip only (an 8×16 tile, two k-steps at a time): an edge strip of at
// most 16 columns.
//
//go:noescape
func gemmAVX512Half(kc int, a, b, c *float32, ldc int, add bool, bias *float32)

// gemmAVX512HalfDirect is gemmAVX512Half reading A unpacked, rows lda
// floats apart.
//
//go:noescape
func gemmAVX512HalfDirect(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)

// gemmDotAVX2 is Σ a[i]·b[i] over n values, n a positive multiple of 32.
//
//go:noescape
func gemmDotAVX2(a, b *float32, n int) float32

// gemmWarm asks the CPU to bring lines cache lines from p on into L1, ahead
// of their use: it never faults, whatever p points at.
//
//go:noescape
func gemmWarm(p *float32, lines int)

// gemmDot is Σ a[i]·b[i] over len(a) ≤ len(b) values.
func gemmDot(a, b []float32) float32 {
	b = b[:len(a)]
	n := 0
	var sum float32
	if hasAVX2 {
		if n = len(a) &^ 31; n > 0 {
			sum = gemmDotAVX2(&a[0], &b[0], n)
		}
	}
	return sum + gemmDotGo(a[n:], b[n:])
}

// cpuFeatures reports whether the CPU and OS support AVX2 with FMA, and
// AVX-512F.
func cpuFeatures() (avx2, avx512 bool) {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false, false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false, false
	}
	xcr0, _ := xgetbv()
	_, ebx7, _, _ := cpuid(7, 0)
	const ymmState, zmmState = 0x6, 0xe0
	const avx2Bit, avx512fBit = 1 << 5, 1 << 16
	avx2 = xcr0&ymmState == ymmState && ebx7&avx2Bit != 0
	avx512 = avx2 && xcr0&zmmState == zmmState && ebx7&avx512fBit != 0
	return avx2, avx512
}

// hasAVX2 and hasAVX512 report the CPU features: AVX2 with FMA, and
// AVX-512F, less those GODEBUG turns off.
var hasAVX2, hasAVX512 = func() (bool, bool) {
	avx2, avx512 := cpuFeatures()
	return godebugCPU(os.Getenv("GODEBUG"), avx2, avx512)
}()

// sgemmVariants lists the kernels of amd64, fastest first; the portable
// one is last.
func sgemmVariants() []sgemmVariant {
	return []sgemmVariant{
		{&sgemmKernel{name: "avx512-8x32", mr: 8, nr: 32, ku: 1, mc: 96, tile: gemmAVX512, direct: gemmAVX512Direct, halfTile: gemmAVX512Half, halfDirect: gemmAVX512HalfDirect, warm: gemmWarm}, []string{"avx512f"}, hasAVX512},
		{&sgemmKernel{name: "avx2-6x16", mr: 6, nr: 16, ku: 1, mc: 96, tile: gemmAVX2, direct: gemmAVX2Direct, halfTile: gemmAVX2Half, halfDirect: gemmAVX2HalfDirect, warm: gemmWarm,
			directPart: []func(int, *float32, int, *float32, *float32, int, bool, *float32){2: gemmAVX2Direct2, 4: gemmAVX2Direct4}}, []string{"avx2", "fma"}, hasAVX2},
		{gemmGo, nil, true},
	}
}
