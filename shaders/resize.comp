// Resize on fp32: one invocation per output element. The OP specialization
// constant picks nearest (0), linear (1) or cubic (2) sampling. Up to four
// dimensions are walked; a dimension whose bit is set in p.resized maps
// output coordinate o to the input coordinate x = a*o + b (computed
// without contraction, as the host that chose a and b assumed), and reads
// the taps around x clamped to the input as the ONNX reference does; other
// dimensions are copied through. Output coordinates outside [lo, hi] of a
// resized dimension get the extrapolation value (tf_crop_and_resize).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int NEAREST = 0;
const int LINEAR = 1;
const int CUBIC = 2;

// TAPS is the number of input elements read along a resized dimension.
const int TAPS = OP == CUBIC ? 4 : (OP == LINEAR ? 2 : 1);

// EXCLUDE_OUTSIDE is the bit of p.resized that asks cubic sampling to
// drop taps outside the input and renormalise the rest.
const uint EXCLUDE_OUTSIDE = 256u;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint resized;
    float extrapolation;
    float cubicA;
    uint inDim[4];
    uint outDim[4];
    float a[4];
    float b[4];
    int lo[4];
    int hi[4];
} p;

// cubic returns the weight of tap t (0 to 3) for an input coordinate
// ratio in (0, 1] past tap 1.
float cubic(int t, float r) {
    float A = p.cubicA;
    float s = t == 0 ? r + 1.0 : (t == 1 ? r : (t == 2 ? 1.0 - r : 2.0 - r));
    if (t == 1 || t == 2) {
        return ((A + 2.0) * s - (A + 3.0)) * s * s + 1.0;
    }
    return ((A * s - 5.0 * A) * s + 8.0 * A) * s - 4.0 * A;
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    int rank = int(p.rank);
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        int o[4];
        uint rest = i;
        for (int d = rank - 1; d >= 0; d--) {
            o[d] = int(rest % p.outDim[d]);
            rest /= p.outDim[d];
        }
        int first[4];
        int taps[4];
        float w[4][4];
        bool outside = false;
        for (int d = 0; d < rank; d++) {
            if ((p.resized & (1u << d)) == 0u) {
                first[d] = o[d];
                taps[d] = 1;
                w[d][0] = 1.0;
                continue;
            }
            if (o[d] < p.lo[d] || o[d] > p.hi[d]) {
                outside = true;
                break;
            }
            precise float c = p.a[d] * float(o[d]) + p.b[d];
            float last = float(p.inDim[d]) - 1.0;
            taps[d] = TAPS;
            if (OP == NEAREST) {
                first[d] = int(clamp(floor(c), 0.0, last));
                w[d][0] = 1.0;
                continue;
            }
            // An integer c is approached from its left: ratio is in (0, 1]
            // past tap TAPS/2 - 1.
            float left = floor(c);
            float ratio = c - left;
            if (ratio == 0.0) {
                left -= 1.0;
                ratio = 1.0;
            }
            float pad = float((TAPS + 1) / 2);
            first[d] = int(clamp(left + 1.0 - float(TAPS / 2), -pad, last + 1.0 + pad - float(TAPS)));
            if (OP == LINEAR) {
                w[d][0] = 1.0 - ratio;
                w[d][1] = ratio;
                continue;
            }
            float sum = 0.0;
            for (int t = 0; t < 4; t++) {
                int j = first[d] + t;
                w[d][t] = cubic(t, ratio);
                if ((p.resized & EXCLUDE_OUTSIDE) != 0u && (j < 0 || j > int(last))) {
                    w[d][t] = 0.0;
                }
                sum += w[d][t];
            }
            if ((p.resized & EXCLUDE_OUTSIDE) != 0u) {
                for (int t = 0; t < 4; t++) {
                    w[d][t] /= sum;
                }
            }
        }
        if (outside) {
            y[i] = DATA(p.extrapolation);
            continue;
        }
        int total = 1;
        for (int d = 0; d < rank; d++) {
            total *= taps[d];
        }
        float acc = 0.0;
        for (int k = 0; k < total; k++) {
            int kr = k;
            uint at = 0u;
            float wt = 1.0;
            for (int d = 0; d < rank; d++) {
                int t = kr % taps[d];
                kr /= taps[d];
                at = at * p.inDim[d] + uint(clamp(first[d] + t, 0, int(p.inDim[d]) - 1));
                wt *= w[d][t];
            }
            acc += wt * float(x[at]);
        }
        y[i] = DATA(acc);
    }
}
