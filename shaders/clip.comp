// Clip on fp32 (fp16 storage with HALF, see half.glsl): y[i] = min(max(x[i], lo), hi). The bounds come from the
// attributes (push constants) or from one-element input buffers, as the
// flags say.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 2) readonly buffer Lo { DATA lo[]; };
layout(std430, set = 0, binding = 3) readonly buffer Hi { DATA hi[]; };

layout(push_constant) uniform Params {
    uint n;
    // flags: bit 0, the lower bound is lo[0]; bit 1, the upper bound is hi[0].
    uint flags;
    float fmin;
    float fmax;
} p;

void main() {
    float a = (p.flags & 1u) != 0u ? float(lo[0]) : p.fmin;
    float b = (p.flags & 2u) != 0u ? float(hi[0]) : p.fmax;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        float v = float(x[i]);
        y[i] = DATA(isnan(v) ? v : min(max(v, a), b));
    }
}
