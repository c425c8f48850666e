// A chain of elementwise fp32 ops (fp16 storage with HALF, see half.glsl)
// in one dispatch: y[i] is a program of up to MAX_OPS unary and binary ops
// (the ops of unary.glsl and binary.glsl) applied in order to a running
// value, each op reading the running value, an input (up to four,
// numpy-broadcast to y's shape) or an immediate (a scalar constant of the
// model). GELU, SiLU, a bias and an activation, a scale and a mask: the
// intermediate values never reach memory. With HALF the inputs are
// widened to fp32 as read and the running value stays fp32 from op to op,
// rounded to fp16 once, at the store.
//
// The program is in the params buffer (words):
//   [0] number of ops, [1] rank of y, [2..9] y's dims,
//   [10 + 8k .. 17 + 8k] the element strides of input k along y's dims
//   (0 where it is broadcast), k < 4,
//   then 4 words per op: code (a unary op, or 64 + a binary op), the
//   sources of its operands (bits 0-7: a, 8-15: b; 0-3 an input, 4 the
//   running value, 5 the op's immediate), and two floats: a unary op's
//   alpha and beta, or a binary op's immediate in the first.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

#include "unary.glsl"
#include "binary.glsl"
#include "half.glsl"

const uint MAX_OPS = 16u;
const uint HEADER = 42u;
const uint BINARY = 64u;
const uint RUNNING = 4u;
const uint IMMEDIATE = 5u;

layout(std430, set = 0, binding = 0) readonly buffer X0 { DATA x0[]; };
layout(std430, set = 0, binding = 1) readonly buffer X1 { DATA x1[]; };
layout(std430, set = 0, binding = 2) readonly buffer X2 { DATA x2[]; };
layout(std430, set = 0, binding = 3) readonly buffer X3 { DATA x3[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 5) readonly buffer Params { uint prog[]; };

layout(push_constant) uniform Push {
    uint n;
    // inputs is the number of inputs bound.
    uint inputs;
} p;

float load(uint k, uint at) {
    switch (k) {
    case 0u: return float(x0[at]);
    case 1u: return float(x1[at]);
    case 2u: return float(x2[at]);
    }
    return float(x3[at]);
}

void main() {
    uint ops = min(prog[0], MAX_OPS);
    int rank = int(prog[1]);
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        float in_[4];
        uint at[4] = uint[4](0u, 0u, 0u, 0u);
        uint rest = i;
        for (int d = rank - 1; d >= 0; d--) {
            uint c = rest % prog[2 + d];
            rest /= prog[2 + d];
            for (uint k = 0u; k < p.inputs; k++) {
                at[k] += c * prog[10u + 8u * k + uint(d)];
            }
        }
        for (uint k = 0u; k < 4u; k++) {
            in_[k] = k < p.inputs ? load(k, at[k]) : 0.0;
        }
        float v = 0.0;
        for (uint o = 0u; o < ops; o++) {
            uint base = HEADER + 4u * o;
            uint code = prog[base];
            uint src = prog[base + 1u];
            float f0 = uintBitsToFloat(prog[base + 2u]);
            float f1 = uintBitsToFloat(prog[base + 3u]);
            uint sa = src & 255u;
            uint sb = (src >> 8) & 255u;
            float a = sa == RUNNING ? v : (sa == IMMEDIATE ? f0 : in_[sa]);
            if (code < BINARY) {
                v = unaryOp(int(code), a, f0, f1);
            } else {
                float b = sb == RUNNING ? v : (sb == IMMEDIATE ? f0 : in_[sb]);
                v = binaryOp(int(code - BINARY), a, b);
            }
        }
        y[i] = DATA(v);
    }
}
