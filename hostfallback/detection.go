package hostfallback

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Detection: NonMaxSuppression and RoiAlign, following ONNX Runtime's CPU
// kernels (RoiAlign's max mode takes the largest weighted corner, as they
// do).

func init() {
	Register("NonMaxSuppression", nmsKernel)
	Register("RoiAlign", roiAlignKernel)
}

// nmsBox is a box as two sorted corners.
type nmsBox struct{ y1, x1, y2, x2 float64 }

// nmsCorners reads the box at the start of b (4 values) in the given format: corners in
// any order (0) or centre, width and height (1).
func nmsCorners(b []float64, centre bool) nmsBox {
	if centre {
		xc, yc, w, h := b[0], b[1], b[2], b[3]
		return nmsBox{yc - h/2, xc - w/2, yc + h/2, xc + w/2}
	}
	return nmsBox{min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])}
}

// overlaps reports whether the intersection over union of a and b exceeds
// thr; boxes of no area never overlap.
func (a nmsBox) overlaps(b nmsBox, thr float64) bool {
	iy1, ix1 := max(a.y1, b.y1), max(a.x1, b.x1)
	iy2, ix2 := min(a.y2, b.y2), min(a.x2, b.x2)
	if iy2 <= iy1 || ix2 <= ix1 {
		return false
	}
	inter := (iy2 - iy1) * (ix2 - ix1)
	areaA := (a.y2 - a.y1) * (a.x2 - a.x1)
	areaB := (b.y2 - b.y1) * (b.x2 - b.x1)
	if areaA <= 0 || areaB <= 0 {
		return false
	}
	return inter/(areaA+areaB-inter) > thr
}

// nmsKernel is NonMaxSuppression: per batch and class, greedily selects
// boxes by descending score (ties by index), dropping those whose IoU with
// a selected box exceeds iou_threshold, up to max_output_boxes_per_class.
// Only scores above score_threshold, when given, are considered.
func nmsKernel(c *Call) error {
	bt, boxes, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	st, scores, err := floatInput(c, 1)
	if err != nil {
		return err
	}
	if bt.Rank() != 3 || bt.Shape[2] != 4 || st.Rank() != 3 || st.Shape[0] != bt.Shape[0] || st.Shape[2] != bt.Shape[1] {
		return c.Errorf("boxes %v and scores %v, want [B, N, 4] and [B, C, N]", bt.Shape, st.Shape)
	}
	maxOut := int64(0)
	if v, ok, err := intsInput(c, 2); err != nil {
		return err
	} else if ok && len(v) > 0 {
		maxOut = v[0]
	}
	iou, scoreThr := 0.0, math.Inf(-1)
	if _, v, err := optFloatInput(c, 3); err != nil {
		return err
	} else if len(v) > 0 {
		iou = v[0]
	}
	if _, v, err := optFloatInput(c, 4); err != nil {
		return err
	} else if len(v) > 0 {
		scoreThr = v[0]
	}
	centre := ops.Params[ops.NonMaxSuppressionParams](c.Node, c.Opset).CenterPointBox != 0
	nb, nc, n := int(st.Shape[0]), int(st.Shape[1]), int(st.Shape[2])
	var sel []int64
	var cand []int
	var kept []nmsBox
	for b := range nb {
		for k := range nc {
			sc := scores[(b*nc+k)*n : (b*nc+k+1)*n]
			cand = cand[:0]
			for i, s := range sc {
				if s > scoreThr {
					cand = append(cand, i)
				}
			}
			slices.SortStableFunc(cand, func(i, j int) int {
				switch {
				case sc[i] > sc[j]:
					return -1
				case sc[i] < sc[j]:
					return 1
				}
				return 0
			})
			kept = kept[:0]
			for _, i := range cand {
				if int64(len(kept)) >= maxOut {
					break
				}
				box := nmsCorners(boxes[(b*n+i)*4:], centre)
				if !slices.ContainsFunc(kept, func(o nmsBox) bool { return o.overlaps(box, iou) }) {
					kept = append(kept, box)
					sel = append(sel, int64(b), int64(k), int64(i))
				}
			}
		}
	}
	copy(graph.View[int64](c.Output(0, graph.Int64, []int64{int64(len(sel) / 3), 3})), sel)
	return nil
}

// roiAlignKernel is RoiAlign: each region of interest [x1, y1, x2, y2]
// (scaled by spatial_scale) of the image its batch index names is divided
// into output_height × output_width bins, each the average (or maximum) of
// bilinear samples on a regular grid.
func roiAlignKernel(c *Call) error {
	xt, x, err := floatInput(c, 0)
	if err != nil {
		return err
	}
	rt, rois, err := floatInput(c, 1)
	if err != nil {
		return err
	}
	bt, err := inputTensor(c, 2)
	if err != nil {
		return err
	}
	batch, err := indexValues(c, bt)
	if err != nil {
		return err
	}
	if xt.Rank() != 4 || rt.Rank() != 2 || rt.Shape[1] != 4 || int64(len(batch)) != rt.Shape[0] {
		return c.Errorf("input %v, rois %v and batch indices %v do not fit [N, C, H, W], [R, 4], [R]", xt.Shape, rt.Shape, bt.Shape)
	}
	p := ops.Params[ops.RoiAlignParams](c.Node, c.Opset)
	oh, ow := int(p.OutputHeight), int(p.OutputWidth)
	ratio := int(p.SamplingRatio)
	scale := float64(p.SpatialScale)
	if oh <= 0 || ow <= 0 || ratio < 0 {
		return c.Errorf("output %dx%d, sampling ratio %d", oh, ow, ratio)
	}
	isMax := false
	switch m := p.Mode; m {
	case "avg":
	case "max":
		isMax = true
	default:
		return c.Errorf("mode %q", m)
	}
	halfPixel := false
	switch m := p.CoordinateTransformationMode; m {
	case "half_pixel":
		halfPixel = true
	case "output_half_pixel", "": // "": RoiAlign-10, which has no such attribute
	default:
		return c.Errorf("coordinate_transformation_mode %q", m)
	}
	offset := 0.0
	if halfPixel {
		offset = 0.5
	}
	nImg, ch, h, w := int(xt.Shape[0]), int(xt.Shape[1]), int(xt.Shape[2]), int(xt.Shape[3])
	if (h == 0 || w == 0) && ch > 0 && len(batch) > 0 {
		return c.Errorf("regions of an empty %dx%d image", h, w)
	}
	nr := len(batch)
	out := make([]float64, nr*ch*oh*ow)
	for r := range nr {
		bi := int(batch[r])
		if bi < 0 || bi >= nImg {
			return c.Errorf("batch index %d out of range for %d images", batch[r], nImg)
		}
		roi := rois[r*4 : r*4+4]
		sx, sy := roi[0]*scale-offset, roi[1]*scale-offset
		rw, rh := roi[2]*scale-offset-sx, roi[3]*scale-offset-sy
		if !halfPixel {
			rw, rh = max(rw, 1), max(rh, 1)
		}
		binH, binW := rh/float64(oh), rw/float64(ow)
		gh, gw := ratio, ratio
		if ratio == 0 {
			gh, gw = int(math.Ceil(rh/float64(oh))), int(math.Ceil(rw/float64(ow)))
		}
		count := float64(max(gh*gw, 1))
		for k := range ch {
			img := x[(bi*ch+k)*h*w : (bi*ch+k+1)*h*w]
			dst := out[(r*ch+k)*oh*ow:]
			for py := range oh {
				for px := range ow {
					acc, first := 0.0, true
					for iy := range gh {
						y := sy + float64(py)*binH + (float64(iy)+0.5)*binH/float64(gh)
						for ix := range gw {
							xx := sx + float64(px)*binW + (float64(ix)+0.5)*binW/float64(gw)
							v := roiSample(img, h, w, y, xx, isMax)
							switch {
							case !isMax:
								acc += v
							case first:
								acc, first = v, false
							default:
								acc = max(acc, v)
							}
						}
					}
					if !isMax {
						acc /= count
					}
					dst[py*ow+px] = acc
				}
			}
		}
	}
	return floatOutput(c, 0, xt.DType, []int64{int64(nr), int64(ch), int64(oh), int64(ow)}, out)
}

// roiSample is the bilinear sample of the h×w image at (y, x), 0 outside
// [-1, h] × [-1, w]; with max it is the largest weighted corner instead of
// their sum.
func roiSample(img []float64, h, w int, y, x float64, isMax bool) float64 {
	if y < -1 || y > float64(h) || x < -1 || x > float64(w) {
		return 0
	}
	y, x = max(y, 0), max(x, 0)
	y0, x0 := int(y), int(x)
	y1, x1 := y0+1, x0+1
	if y0 >= h-1 {
		y0, y1, y = h-1, h-1, float64(h-1)
	}
	if x0 >= w-1 {
		x0, x1, x = w-1, w-1, float64(w-1)
	}
	ly, lx := y-float64(y0), x-float64(x0)
	hy, hx := 1-ly, 1-lx
	a, b := hy*hx*img[y0*w+x0], hy*lx*img[y0*w+x1]
	cc, d := ly*hx*img[y1*w+x0], ly*lx*img[y1*w+x1]
	if isMax {
		return max(a, b, cc, d)
	}
	return a + b + cc + d
}
