// LayerNormalization on fp32: each of the rows of len elements is
// normalized to zero mean and unit variance (epsilon added to the
// variance), then scaled and shifted elementwise by scale and bias, which
// repeat every sn and bn elements. The mean and the inverse standard
// deviation of each row are optional outputs. One workgroup normalizes a
// row at a time, or, with flag bit 4 (short rows), each invocation a row
// of its own. With flag bit 3 the row is not centred: RMSNormalization,
// x / sqrt(mean(x²) + epsilon) · scale. Compiled with SUBGROUP (see
// subgroup.glsl), a workgroup reads its row twice: once for each
// invocation's sum and sum of squares about its own first element,
// combined into the row's mean and variance by two subgroup reductions
// (Chan's pairwise update), then to write it. Otherwise it reads it
// three times, for the mean, the variance and the output, reducing in a
// shared-memory tree.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

#ifdef SUBGROUP
#include "subgroup.glsl"
#else
layout(local_size_x = 256) in;
#endif

// WG is the width of a workgroup.
const uint WG = gl_WorkGroupSize.x;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) readonly buffer S { DATA scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { DATA bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Mean { float omean[]; };
layout(std430, set = 0, binding = 5) writeonly buffer InvStdDev { float oinv[]; };

layout(push_constant) uniform Params {
    uint rows;
    uint len;
    float epsilon;
    // flags: bit 0, bias is bound; bit 1, write omean; bit 2, write oinv;
    // bit 3, RMS (mean taken as 0); bit 4, a row per invocation.
    uint flags;
    uint sn;
    uint bn;
} p;

#ifndef SUBGROUP
shared float part[256];

// sum returns the sum of every invocation's v to all of them.
float sum(float v) {
    uint lid = gl_LocalInvocationID.x;
    part[lid] = v;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            part[lid] += part[lid + s];
        }
        barrier();
    }
    float r = part[0];
    barrier();
    return r;
}
#endif

// normalize writes row r, at base, from its mean and inverse standard
// deviation: its elements from the first, each step-th.
void normalize(uint r, uint base, float mean, float inv, uint first, uint step) {
    if (first == 0u && (p.flags & 2u) != 0u) {
        omean[r] = mean;
    }
    if (first == 0u && (p.flags & 4u) != 0u) {
        oinv[r] = inv;
    }
    for (uint j = first; j < p.len; j += step) {
        float v = (float(x[base + j]) - mean) * inv * float(scale[j % p.sn]);
        if ((p.flags & 1u) != 0u) {
            v += float(bias[j % p.bn]);
        }
        y[base + j] = DATA(v);
    }
}

// serialRow normalizes row r in the calling invocation alone.
void serialRow(uint r) {
    uint base = r * p.len;
    float mean = 0.0;
    if ((p.flags & 8u) == 0u) {
        float s = 0.0;
        for (uint j = 0u; j < p.len; j++) {
            s += float(x[base + j]);
        }
        mean = s / float(p.len);
    }
    float q = 0.0;
    for (uint j = 0u; j < p.len; j++) {
        float d = float(x[base + j]) - mean;
        q += d * d;
    }
    normalize(r, base, mean, 1.0 / sqrt(q / float(p.len) + p.epsilon), 0u, 1u);
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    if ((p.flags & 16u) != 0u) {
        for (uint r = gl_GlobalInvocationID.x; r < p.rows; r += gl_NumWorkGroups.x * WG) {
            serialRow(r);
        }
        return;
    }
    for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
        uint base = r * p.len;
#ifdef SUBGROUP
        // This invocation's n elements, shifted by its first one, k, sum
        // to s and their squares to q: its mean is k + s / n and the sum
        // of its squared deviations q - s² / n. The row's are Chan's
        // combination of every invocation's.
        float k = lid < p.len && (p.flags & 8u) == 0u ? float(x[base + lid]) : 0.0;
        float s = 0.0;
        float q = 0.0;
        for (uint j = lid; j < p.len; j += WG) {
            float d = float(x[base + j]) - k;
            s += d;
            q += d * d;
        }
        float n = float((p.len - min(lid, p.len) + WG - 1u) / WG);
        float mean = 0.0;
        if ((p.flags & 8u) == 0u) {
            float own = n > 0.0 ? k + s / n : 0.0;
            mean = groupAdd(n * own) / float(p.len);
            float d = own - mean;
            q = n > 0.0 ? q - s * s / n + n * d * d : 0.0;
        }
        normalize(r, base, mean, 1.0 / sqrt(groupAdd(q) / float(p.len) + p.epsilon), lid, WG);
#else
        float mean = 0.0;
        if ((p.flags & 8u) == 0u) {
            float s = 0.0;
            for (uint j = lid; j < p.len; j += WG) {
                s += float(x[base + j]);
            }
            mean = sum(s) / float(p.len);
        }
        float q = 0.0;
        for (uint j = lid; j < p.len; j += WG) {
            float d = float(x[base + j]) - mean;
            q += d * d;
        }
        normalize(r, base, mean, 1.0 / sqrt(sum(q) / float(p.len) + p.epsilon), lid, WG);
#endif
    }
}
