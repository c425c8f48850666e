package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/onnxvk/onnxvk"
)

// addFP16Flag adds the --fp16 flag of run, bench, plan and serve.
func addFP16Flag(fs *flag.FlagSet) *bool {
	return fs.Bool("fp16", false, "float16 mode: on a GPU with 16-bit storage, activations and weights as float16 with float32 arithmetic and accumulation, precision-sensitive ops kept float32 (elsewhere fp32, with the reason printed)")
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
