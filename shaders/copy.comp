// Strided copy of elements of one or two 32-bit words (OP, any element
// type of that size): for i < n, with c the index of i in dims,
// y[dbase + sum_d c_d * dst[d]] = x[sbase + sum_d c_d * sst[d]].
// Reshape is rank 1; Slice, Concat, Split, Expand, Tile and
// DepthToSpace/SpaceToDepth choose bases and strides.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

// OP is the number of 32-bit words per element.
layout(constant_id = 0) const int OP = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { WORD x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { WORD y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint sbase;
    uint dbase;
    uint dims[8];
    int sst[8];
    uint dst[8];
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint rest = i;
        int src = int(p.sbase);
        uint dst = p.dbase;
        for (int d = int(p.rank) - 1; d >= 0; d--) {
            uint c = rest % p.dims[d];
            rest /= p.dims[d];
            src += int(c) * p.sst[d];
            dst += c * p.dst[d];
        }
        for (int w = 0; w < OP; w++) {
            y[uint(OP) * dst + uint(w)] = x[OP * src + w];
        }
    }
}
