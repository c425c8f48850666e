package hostfallback

import "testing"

// TestGodebugCPU checks which GODEBUG settings take AVX2 and AVX-512 away.
func TestGodebugCPU(t *testing.T) {
	for _, c := range []struct {
		env                  string
		has2, has512         bool
		wantAVX2, wantAVX512 bool
	}{
		{"", true, true, true, true},
		{"cpu.avx512f=off", true, true, true, false},
		{"gctrace=1,cpu.avx2=off", true, true, false, false},
		{"cpu.fma=off", true, true, false, false},
		{"cpu.all=off", true, true, false, false},
		{"cpu.all=off,cpu.avx=on,cpu.avx2=on,cpu.fma=on", true, true, true, false},
		{"cpu.avx512f=off,cpu.avx512f=on", true, true, true, true},
		{"cpu.avx512f=on", true, false, true, false},
		{"cpu.avx512f=maybe,cpu.avx2", true, true, true, true},
	} {
		avx2, avx512 := godebugCPU(c.env, c.has2, c.has512)
		if avx2 != c.wantAVX2 || avx512 != c.wantAVX512 {
			t.Errorf("GODEBUG=%q on a CPU with AVX2 %v, AVX-512 %v: AVX2 %v, AVX-512 %v; want %v, %v", c.env, c.has2, c.has512, avx2, avx512, c.wantAVX2, c.wantAVX512)
		}
	}
}
