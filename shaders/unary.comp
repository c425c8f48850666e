// Elementwise unary ops on fp32 (fp16 storage with HALF, see half.glsl): y[i] = f(x[i]). The op is chosen by the
// specialization constant OP; alpha and beta are the op's attributes.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

#include "unary.glsl"
#include "half.glsl"

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    uint n;
    float alpha;
    float beta;
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        y[i] = DATA(unaryOp(OP, float(x[i]), p.alpha, p.beta));
    }
}
