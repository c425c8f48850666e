//go:build !amd64 || noasm

package hostfallback

// gemvRows is c[j] += Σ_p a[p]·b[p·ldb+j] for j < len(c), p < len(a).
func gemvRows(a, b []float32, ldb int, c []float32) { gemvGo(a, b, ldb, c) }

// gemvZMM reports whether gemvRows takes 32-column blocks with AVX-512:
// never without the assembly.
var gemvZMM = false
