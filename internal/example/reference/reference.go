// Package reference computes the built-in example's output in plain Go,
// independently of the runtime, for the tests that run the example.
package reference

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

// Edges returns the example model's output for image in (float32
// [1,3,H,W]) as H rows of W values, computed in float64 with plain loops
// from what the model's description says: grayscale (ITU-R BT.601
// weights), a 5x5 binomial blur and the Sobel gradients' magnitude,
// clipped to 1, with edge padding (reads clamped to the image).
func Edges(in *graph.Tensor) [][]float64 {
	h, w := int(in.Shape[2]), int(in.Shape[3])
	px := graph.View[float32](in)
	at := func(img [][]float64, y, x int) float64 {
		return img[min(max(y, 0), len(img)-1)][min(max(x, 0), len(img[0])-1)]
	}
	grid := func(f func(y, x int) float64) [][]float64 {
		out := make([][]float64, h)
		for y := range out {
			out[y] = make([]float64, w)
			for x := range out[y] {
				out[y][x] = f(y, x)
			}
		}
		return out
	}
	gray := grid(func(y, x int) float64 {
		i := y*w + x
		return 0.299*float64(px[i]) + 0.587*float64(px[h*w+i]) + 0.114*float64(px[2*h*w+i])
	})
	// Edge padding by 3 then two valid convolutions equal clamped reads.
	binomial := []float64{1, 4, 6, 4, 1}
	blurred := make([][]float64, h+2)
	for y := range blurred {
		blurred[y] = make([]float64, w+2)
		for x := range blurred[y] {
			for i, a := range binomial {
				for j, b := range binomial {
					blurred[y][x] += a * b / 256 * at(gray, y-1+i-2, x-1+j-2)
				}
			}
		}
	}
	return grid(func(y, x int) float64 {
		b := func(dy, dx int) float64 { return blurred[y+1+dy][x+1+dx] }
		gx := b(-1, 1) + 2*b(0, 1) + b(1, 1) - b(-1, -1) - 2*b(0, -1) - b(1, -1)
		gy := b(1, -1) + 2*b(1, 0) + b(1, 1) - b(-1, -1) - 2*b(-1, 0) - b(-1, 1)
		return min(math.Sqrt(gx*gx+gy*gy), 1)
	})
}
