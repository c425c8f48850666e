// LayerNormalization on fp32: each of the rows of len elements is
// normalized to zero mean and unit variance (epsilon added to the
// variance), then scaled and shifted elementwise by scale and bias, which
// repeat every sn and bn elements. The mean and the inverse standard
// deviation of each row are optional outputs. One workgroup normalizes a
// row at a time, reducing in shared memory. With flag bit 3 the row is
// not centred: RMSNormalization, x / sqrt(mean(x²) + epsilon) · scale.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

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
    // bit 3, RMS (mean taken as 0).
    uint flags;
    uint sn;
    uint bn;
} p;

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

void main() {
    uint lid = gl_LocalInvocationID.x;
    for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
        uint base = r * p.len;
        float mean = 0.0;
        if ((p.flags & 8u) == 0u) {
            float s = 0.0;
            for (uint j = lid; j < p.len; j += 256u) {
                s += float(x[base + j]);
            }
            mean = sum(s) / float(p.len);
        }
        float q = 0.0;
        for (uint j = lid; j < p.len; j += 256u) {
            float d = float(x[base + j]) - mean;
            q += d * d;
        }
        float inv = 1.0 / sqrt(sum(q) / float(p.len) + p.epsilon);
        if (lid == 0u && (p.flags & 2u) != 0u) {
            omean[r] = mean;
        }
        if (lid == 0u && (p.flags & 4u) != 0u) {
            oinv[r] = inv;
        }
        for (uint j = lid; j < p.len; j += 256u) {
            float v = (float(x[base + j]) - mean) * inv * float(scale[j % p.sn]);
            if ((p.flags & 1u) != 0u) {
                v += float(bias[j % p.bn]);
            }
            y[base + j] = DATA(v);
        }
    }
}
