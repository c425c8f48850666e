package main

import (
	"flag"
	"fmt"
	"image"
	_ "image/gif" // decoders for -i NAME=picture
	_ "image/jpeg"
	_ "image/png"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
)

// imageExts are the file types -i decodes as pictures.
var imageExts = []string{".png", ".jpg", ".jpeg", ".gif"}

// imageOptions say how a picture given with -i becomes an input tensor:
// torchvision's classification preprocessing by default (the shorter side
// resized, a centre crop to the input's size, values scaled to 0..1 and
// normalised by ImageNet's mean and standard deviation).
type imageOptions struct {
	resize    int
	mean, std [3]float64
}

// addImageFlags registers the flags of imageOptions on fs.
func addImageFlags(fs *flag.FlagSet) *imageOptions {
	o := &imageOptions{mean: [3]float64{0.485, 0.456, 0.406}, std: [3]float64{0.229, 0.224, 0.225}}
	fs.IntVar(&o.resize, "resize", 0, "for a picture input (-i NAME=photo.jpg): resize its shorter side to `N` before the centre crop to the input's size (default: 256 for a 224×224 input, as torchvision does, else the input's size)")
	fs.Var(triple{&o.mean}, "mean", "for a picture input: the per-channel mean subtracted from its 0..1 values, `R,G,B`")
	fs.Var(triple{&o.std}, "std", "for a picture input: the per-channel standard deviation its values are divided by, `R,G,B`")
	return o
}

// triple is a flag of three comma-separated numbers.
type triple struct{ v *[3]float64 }

func (t triple) String() string {
	if t.v == nil {
		return ""
	}
	return fmt.Sprintf("%g,%g,%g", t.v[0], t.v[1], t.v[2])
}

func (t triple) Set(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return fmt.Errorf("want three numbers R,G,B, got %q", s)
	}
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return fmt.Errorf("want three numbers R,G,B, got %q", s)
		}
		t.v[i] = f
	}
	return nil
}

// readImage decodes the picture at path into a tensor for the input in:
// float32 NCHW or NHWC (3 channels, batch 1), or uint8 with the raw 0..255
// values, cropped and resized to the input's size.
func readImage(path string, in onnxvk.ValueInfo, o *imageOptions) (*graph.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, err
	}
	s := in.Shape
	nchw := len(s) == 4 && s[1] == 3
	nhwc := len(s) == 4 && s[3] == 3
	if !nchw && !nhwc || in.DType != graph.Float && in.DType != graph.Uint8 {
		return nil, fmt.Errorf("a picture fills a float32 or uint8 input of shape [1,3,H,W] or [1,H,W,3]; %q is %s", in.Name, in.Type)
	}
	hd, wd := s[2], s[3]
	if nhwc {
		hd, wd = s[1], s[2]
	}
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	if hd >= 0 && wd >= 0 {
		h, w = int(hd), int(wd)
	}
	resize := o.resize
	if resize == 0 && h == 224 && w == 224 {
		resize = 256
	}
	// The region of the picture the output samples: the centre h×w of the
	// picture scaled so that its shorter side is resize (or, without
	// resize, scaled to cover h×w).
	scale := float64(resize) / float64(min(b.Dx(), b.Dy()))
	if resize == 0 {
		scale = max(float64(h)/float64(b.Dy()), float64(w)/float64(b.Dx()))
	}
	x0 := float64(b.Min.X) + (float64(b.Dx())-float64(w)/scale)/2
	y0 := float64(b.Min.Y) + (float64(b.Dy())-float64(h)/scale)/2
	t := graph.NewTensor(in.DType, []int64{1, 3, int64(h), int64(w)})
	if nhwc {
		t = graph.NewTensor(in.DType, []int64{1, int64(h), int64(w), 3})
	}
	at := func(y, x, c int) int {
		if nhwc {
			return (y*w+x)*3 + c
		}
		return (c*h+y)*w + x
	}
	for y := range h {
		for x := range w {
			rgb := bilinear(img, x0+(float64(x)+0.5)/scale-0.5, y0+(float64(y)+0.5)/scale-0.5)
			for c := range 3 {
				if in.DType == graph.Uint8 {
					graph.View[uint8](t)[at(y, x, c)] = uint8(math.Round(rgb[c] * 255))
					continue
				}
				graph.View[float32](t)[at(y, x, c)] = float32((rgb[c] - o.mean[c]) / o.std[c])
			}
		}
	}
	return t, nil
}

// bilinear samples img at (x, y) in pixel coordinates (pixel centres at
// whole numbers), clamped to the picture: RGB in 0..1.
func bilinear(img image.Image, x, y float64) [3]float64 {
	b := img.Bounds()
	x = math.Max(float64(b.Min.X), math.Min(x, float64(b.Max.X-1)))
	y = math.Max(float64(b.Min.Y), math.Min(y, float64(b.Max.Y-1)))
	x1, y1 := int(x), int(y)
	x2, y2 := min(x1+1, b.Max.X-1), min(y1+1, b.Max.Y-1)
	fx, fy := x-float64(x1), y-float64(y1)
	var out [3]float64
	for _, p := range []struct {
		x, y int
		w    float64
	}{{x1, y1, (1 - fx) * (1 - fy)}, {x2, y1, fx * (1 - fy)}, {x1, y2, (1 - fx) * fy}, {x2, y2, fx * fy}} {
		r, g, bl, _ := img.At(p.x, p.y).RGBA()
		out[0] += p.w * float64(r) / 0xffff
		out[1] += p.w * float64(g) / 0xffff
		out[2] += p.w * float64(bl) / 0xffff
	}
	return out
}

// printTopK prints, for an output that looks like class scores (float,
// shape [1, K] or [K] with K ≥ 10), its 5 best classes with their
// probabilities: the scores themselves when they already sum to 1, else
// their softmax. labels name the classes when given.
func printTopK(w io.Writer, t *graph.Tensor, labels []string) {
	s := t.Shape
	if t.DType != graph.Float || !(len(s) == 2 && s[0] == 1 || len(s) == 1) || s[len(s)-1] < 10 {
		return
	}
	scores := graph.View[float32](t)
	sum, nonneg := 0.0, true
	for _, v := range scores {
		sum += float64(v)
		nonneg = nonneg && v >= 0
	}
	prob := make([]float64, len(scores))
	if nonneg && math.Abs(sum-1) < 1e-3 {
		for i, v := range scores {
			prob[i] = float64(v)
		}
	} else {
		top := float64(slices.Max(scores))
		total := 0.0
		for i, v := range scores {
			prob[i] = math.Exp(float64(v) - top)
			total += prob[i]
		}
		for i := range prob {
			prob[i] /= total
		}
	}
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(prob[a], prob[b]) })
	fmt.Fprintf(w, "  top 5 of %d classes:", len(scores))
	for _, i := range order[:5] {
		label := strconv.Itoa(i)
		if i < len(labels) {
			label = fmt.Sprintf("%d %s", i, labels[i])
		}
		fmt.Fprintf(w, " %s (%.3f)", label, prob[i])
	}
	fmt.Fprintln(w)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readLabels reads class names, one per line.
func readLabels(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--labels: %w", err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n"), nil
}
