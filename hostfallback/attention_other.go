//go:build !amd64 || noasm

package hostfallback

// sdpaPackStrip16 reports that there is no vector packing here.
func sdpaPackStrip16(strip, x []float32, at, rs, cs, kc int, scale float32) bool { return false }

// sdpaScaleRows multiplies row r of the rows×cols block at c (rows ldc
// apart) by f[r].
func sdpaScaleRows(c []float32, ldc, rows, cols int, f []float32) {
	sdpaScaleRowsGo(c, ldc, rows, cols, f)
}
