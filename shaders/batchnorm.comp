// BatchNormalization in inference form on fp32: x read as
// [n, features, inner] and each feature f scaled and shifted by its
// statistics, y = x * a + (b - mean * a) with a = scale / sqrt(var + eps),
// as the CPU kernel computes it.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Scale { DATA scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { DATA b[]; };
layout(std430, set = 0, binding = 3) readonly buffer Mean { DATA mean[]; };
layout(std430, set = 0, binding = 4) readonly buffer Var { DATA var[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint features;
    uint inner;
    float epsilon;
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint f = (i / p.inner) % p.features;
        float a = float(scale[f]) / sqrt(float(var[f]) + p.epsilon);
        y[i] = DATA(float(x[i]) * a + (float(b[f]) - float(mean[f]) * a));
    }
}
