// Transpose on fp32 up to rank 6: y[i] = x[sum_d c_d * st[d]] where c is
// the index of i in the output dims and st[d] the input stride of the
// input axis that output axis d comes from.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint dims[6];
    uint st[6];
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint rest = i;
        uint src = 0u;
        for (int d = int(p.rank) - 1; d >= 0; d--) {
            src += (rest % p.dims[d]) * p.st[d];
            rest /= p.dims[d];
        }
        y[i] = DATA(float(x[src]));
    }
}
