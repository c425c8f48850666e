// BatchNormalization in inference form on fp32: x read as
// [n, features, inner] and each feature f scaled and shifted by its
// statistics, y = x * a + (b - mean * a) with a = scale / sqrt(var + eps),
// as the CPU kernel computes it.
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Scale { float scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 3) readonly buffer Mean { float mean[]; };
layout(std430, set = 0, binding = 4) readonly buffer Var { float var[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Y { float y[]; };

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
        float a = scale[f] / sqrt(var[f] + p.epsilon);
        y[i] = x[i] * a + (b[f] - mean[f] * a);
    }
}
