// Elementwise binary ops on fp32 (fp16 storage with HALF, see half.glsl) with numpy broadcasting: y = f(a, b).
// The op is chosen by the specialization constant OP. Output dims and the
// element strides of a and b (0 along broadcast dims) come as push
// constants, up to rank 8.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

#include "binary.glsl"
#include "half.glsl"

layout(std430, set = 0, binding = 0) readonly buffer A { DATA a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { DATA b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint dims[8];
    uint sa[8];
    uint sb[8];
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint rest = i;
        uint ia = 0u;
        uint ib = 0u;
        for (int d = int(p.rank) - 1; d >= 0; d--) {
            uint c = rest % p.dims[d];
            rest /= p.dims[d];
            ia += c * p.sa[d];
            ib += c * p.sb[d];
        }
        y[i] = DATA(binaryOp(OP, float(a[ia]), float(b[ib])));
    }
}
