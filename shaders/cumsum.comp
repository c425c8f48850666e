// CumSum on fp32: running sums along one axis. Each invocation walks one
// line (an outer index and an inner index) of n elements inner apart, in
// reverse when asked, with Kahan compensation; exclusive sums leave out
// each element's own value.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint lines;
    uint n;
    uint inner;
    uint exclusive;
    uint reverse;
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint line = gl_GlobalInvocationID.x; line < p.lines; line += stride) {
        uint base = (line / p.inner) * p.n * p.inner + line % p.inner;
        float sum = 0.0;
        float comp = 0.0;
        for (uint k = 0u; k < p.n; k++) {
            uint at = base + (p.reverse != 0u ? p.n - 1u - k : k) * p.inner;
            float v = float(x[at]);
            if (p.exclusive != 0u) {
                y[at] = DATA(sum);
            }
            precise float t = v - comp;
            precise float s = sum + t;
            comp = (s - sum) - t;
            sum = s;
            if (p.exclusive == 0u) {
                y[at] = DATA(sum);
            }
        }
    }
}
