// Where: y = cond ? x : v with the three inputs numpy-broadcast. cond is
// bools (bytes read through 32-bit words); the elements of x, v and y are
// EW (OP) 32-bit words. Output dims and the element strides of cond, x and
// v (0 along broadcast dims) come as push constants, up to rank 6.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const int EW = 1;

layout(std430, set = 0, binding = 0) readonly buffer C { uint cond[]; };
layout(std430, set = 0, binding = 1) readonly buffer X { WORD x[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { WORD v[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { WORD y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint dims[6];
    uint sc[6];
    uint sx[6];
    uint sv[6];
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint rest = i;
        uint ic = 0u;
        uint ix = 0u;
        uint iv = 0u;
        for (int d = int(p.rank) - 1; d >= 0; d--) {
            uint c = rest % p.dims[d];
            rest /= p.dims[d];
            ic += c * p.sc[d];
            ix += c * p.sx[d];
            iv += c * p.sv[d];
        }
        bool take = ((cond[ic >> 2] >> (8u * (ic & 3u))) & 0xffu) != 0u;
        for (int j = 0; j < EW; j++) {
            y[uint(EW) * i + uint(j)] = take ? x[uint(EW) * ix + uint(j)] : v[uint(EW) * iv + uint(j)];
        }
    }
}
