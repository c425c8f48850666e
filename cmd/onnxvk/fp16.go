package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/onnxvk/onnxvk"
)

// addFP16Flag adds the --fp16 flag of run and bench.
func addFP16Flag(fs *flag.FlagSet) *bool {
	return fs.Bool("fp16", false, "fp16 precision mode: keep the constant weights of MatMul, Gemm and the convolutions as fp16 on a GPU with 16-bit storage (activations and accumulation stay fp32; elsewhere fp32, with the reason printed)")
}

// fp16Options returns the session options --fp16 asks for.
func fp16Options(on bool) []onnxvk.Option {
	if on {
		return []onnxvk.Option{onnxvk.WithFP16()}
	}
	return nil
}

// printPrecision says, under --fp16, which precision the session got and
// why where it is not fp16.
func printPrecision(w io.Writer, sess *onnxvk.Session, on bool) {
	if on {
		fmt.Fprintf(w, "precision: %s\n", sess.Precision())
	}
}
