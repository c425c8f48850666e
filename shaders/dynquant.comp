// DynamicQuantizeLinear of float32 x in three dispatches, OP naming the
// step:
//
//   MINMAX (0): each workgroup writes the least and greatest value of its
//   share of x, both starting from 0, to part[2g] and part[2g + 1];
//   PARAMS (1): one workgroup folds the p.parts pairs into lo and hi and
//   writes scale = (hi - lo) / 255 and the zero point
//   clamp(roundEven(-lo / scale), 0, 255) (0 when scale is 0);
//   QUANTIZE (2): y = clamp(roundEven(x / scale) + zero point, 0, 255),
//   invocation w writing word w of y, elements 4w .. 4w+3.
//
// The divisions are quotient's (quotient.glsl), so scale, zero point and
// y are the CPU kernel's to the bit. A NaN in x gives unspecified results
// (the CPU kernel's differ too: its min and max propagate NaN).
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int MINMAX = 0;
const int PARAMS = 1;
const int QUANTIZE = 2;

#include "quotient.glsl"

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { uint y[]; };
layout(std430, set = 0, binding = 2) buffer Scale { float scale[]; };
layout(std430, set = 0, binding = 3) buffer Zero { uint zero[]; };
layout(std430, set = 0, binding = 4) buffer Part { float part[]; };

layout(push_constant) uniform Params {
    uint n;
    uint parts;
} p;

shared float slo[256];
shared float shi[256];

// fold leaves in slo[0] and shi[0] the least of slo and the greatest of
// shi over the workgroup.
void fold(float lo, float hi) {
    uint t = gl_LocalInvocationID.x;
    slo[t] = lo;
    shi[t] = hi;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) {
            slo[t] = min(slo[t], slo[t + s]);
            shi[t] = max(shi[t], shi[t + s]);
        }
        barrier();
    }
}

void main() {
    uint t = gl_LocalInvocationID.x;
    float lo = 0.0;
    float hi = 0.0;
    if (OP == MINMAX) {
        uint stride = gl_NumWorkGroups.x * 256u;
        for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
            lo = min(lo, x[i]);
            hi = max(hi, x[i]);
        }
        fold(lo, hi);
        if (t == 0u) {
            part[2u * gl_WorkGroupID.x] = slo[0];
            part[2u * gl_WorkGroupID.x + 1u] = shi[0];
        }
        return;
    }
    if (OP == PARAMS) {
        for (uint g = t; g < p.parts; g += 256u) {
            lo = min(lo, part[2u * g]);
            hi = max(hi, part[2u * g + 1u]);
        }
        fold(lo, hi);
        if (t == 0u) {
            float s = quotient(shi[0] - slo[0], 255.0);
            scale[0] = s;
            zero[0] = s == 0.0 ? 0u : uint(clamp(roundEven(quotient(-slo[0], s)), 0.0, 255.0));
        }
        return;
    }
    float s = scale[0];
    float z = float(zero[0] & 0xffu);
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint w = gl_GlobalInvocationID.x; w < (p.n + 3u) / 4u; w += stride) {
        uint word = 0u;
        for (uint k = 0u; k < 4u && 4u * w + k < p.n; k++) {
            float q = s == 0.0 ? z : z + roundEven(quotient(x[4u * w + k], s));
            word |= uint(clamp(q, 0.0, 255.0)) << (8u * k);
        }
        y[w] = word;
    }
}
