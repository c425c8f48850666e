package hostfallback

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestImageDecoder(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.NRGBA{R: 255, G: 0, B: 10, A: 255})
	img.Set(1, 0, color.NRGBA{R: 1, G: 2, B: 3, A: 128})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	stream := ewT(graph.Uint8, ewShape(int64(buf.Len())), buf.Bytes()...)
	y := ewRun(t, "ImageDecoder", 20, nil, stream)
	ewCheck(t, "rgb", y, graph.Uint8, ewShape(1, 2, 3), []float64{255, 0, 10, 1, 2, 3}, 0)
	y = ewRun(t, "ImageDecoder", 20, ewWith(ewString("pixel_format", "BGR")), stream)
	ewCheck(t, "bgr", y, graph.Uint8, ewShape(1, 2, 3), []float64{10, 0, 255, 3, 2, 1}, 0)
	y = ewRun(t, "ImageDecoder", 20, ewWith(ewString("pixel_format", "Grayscale")), stream)
	// 0.299·255 + 0.114·10 = 77.4; 0.299 + 1.174 + 0.342 = 1.8.
	ewCheck(t, "gray", y, graph.Uint8, ewShape(1, 2, 1), []float64{77, 2}, 0)
	if _, err := xRun(t, "", "ImageDecoder", 20, nil, 1, ewT(graph.Uint8, ewShape(3), uint8('B'), 'M', 0)); err == nil {
		t.Error("no error for an unknown format")
	}
	ewFails(t, "ImageDecoder", 20, ewWith(ewString("pixel_format", "CMYK")), stream)
}
