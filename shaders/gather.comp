// Gather along one axis of elements of one or two 32-bit words: data is
// [outer, axisDim, inner], indices has k entries (int32, or int64 whose
// high word is ignored), y is [outer, k, inner]. Negative indices count
// from the end. OP bit 0: two words per element; bit 1: int64 indices.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { WORD x[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { WORD y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint k;
    uint inner;
    uint axisDim;
} p;

void main() {
    const uint words = (OP & 1) != 0 ? 2u : 1u;
    const uint istep = (OP & 2) != 0 ? 2u : 1u;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint in_ = i % p.inner;
        uint j = (i / p.inner) % p.k;
        uint o = i / (p.inner * p.k);
        int at = idx[j * istep];
        if (at < 0) {
            at += int(p.axisDim);
        }
        uint src = (o * p.axisDim + uint(clamp(at, 0, int(p.axisDim) - 1))) * p.inner + in_;
        for (uint w = 0u; w < words; w++) {
            y[i * words + w] = x[src * words + w];
        }
    }
}
