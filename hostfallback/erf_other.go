//go:build !amd64 || noasm

package hostfallback

// erfVec sets d[i] to erf(s[i]) or, with gelu, to GELU(s[i]).
func erfVec(d, s []float32, gelu bool) {
	if gelu {
		geluErfLoopGo(d, s)
		return
	}
	erfLoopGo(d, s)
}
