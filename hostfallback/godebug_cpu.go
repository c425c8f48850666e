package hostfallback

import "strings"

// godebugCPU turns off the features that GODEBUG's cpu options turn off
// for the Go runtime (cpu.all, cpu.avx, cpu.avx2, cpu.fma, cpu.avx512f set
// to off; the last setting of a feature wins, and on cannot add a feature
// the CPU lacks), so that GODEBUG=cpu.avx512f=off runs the AVX2 kernels on
// an AVX-512 machine, as it does the runtime's own.
func godebugCPU(env string, avx2, avx512 bool) (bool, bool) {
	off := map[string]bool{}
	for _, field := range strings.Split(env, ",") {
		key, value, ok := strings.Cut(field, "=")
		name, isCPU := strings.CutPrefix(key, "cpu.")
		if !ok || !isCPU || (value != "on" && value != "off") {
			continue
		}
		names := []string{name}
		if name == "all" {
			names = []string{"avx", "avx2", "fma", "avx512f"}
		}
		for _, n := range names {
			off[n] = value == "off"
		}
	}
	avx2 = avx2 && !off["avx"] && !off["avx2"] && !off["fma"]
	return avx2, avx512 && avx2 && !off["avx512f"]
}
