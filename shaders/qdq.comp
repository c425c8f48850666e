// QuantizeLinear of float32 x and DequantizeLinear to float32, with a
// float32 scale and a zero point (optional) per tensor, per index along an
// axis or per block along it:
//
//   QUANT (0): y = clamp(roundEven(x / scale) + zero point, LO, HI), the
//   division quotient's (quotient.glsl), as the CPU's;
//   DEQUANT (1): y = float(x - zero point) * scale.
//
// OP is MODE + 2 * TYPE, TYPE the quantized type: uint8 (0), int8 (1),
// uint4 (2) or int4 (3). Quantized elements are packed in 32-bit words,
// element i in bits BITS * (i % PER) of word i / PER, as ONNX packs 4-bit
// ones (the first in the low nibble); a QUANT invocation writes one word,
// a DEQUANT one one element. Element i of x at outer index o, axis index
// d and inner index j (i = (o * p.dim + d) * p.inner + j) takes scale and
// zero point o * p.so + (d / p.bs) * p.sd + j * p.si: all 0 per tensor,
// d per axis, the block's index when blocked.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int QUANT = 0;
const int DEQUANT = 1;
const int MODE = OP & 1;
const int TYPE = OP >> 1;
const bool SIGNED = (TYPE & 1) != 0;
const int BITS = TYPE >= 2 ? 4 : 8;
const uint PER = 32u / uint(BITS);
const int LO = SIGNED ? -(1 << (BITS - 1)) : 0;
const int HI = SIGNED ? (1 << (BITS - 1)) - 1 : (1 << BITS) - 1;

#include "quotient.glsl"

layout(std430, set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(std430, set = 0, binding = 1) readonly buffer S { float scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer Z { uint zero[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint dim;
    uint inner;
    uint bs;
    uint so;
    uint sd;
    uint si;
    // zp: 1 when the zero point is bound.
    uint zp;
} p;

// field returns element i of a packed quantized array's word w.
float field(uint w, uint i) {
    int at = int(i % PER) * BITS;
    return SIGNED ? float(bitfieldExtract(int(w), at, BITS)) : float(bitfieldExtract(w, at, BITS));
}

uint param(uint i) {
    uint o = i / (p.dim * p.inner);
    uint d = (i / p.inner) % p.dim;
    return o * p.so + (d / p.bs) * p.sd + (i % p.inner) * p.si;
}

float zeroAt(uint k) {
    return p.zp == 0u ? 0.0 : field(zero[k / PER], k);
}

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    if (MODE == DEQUANT) {
        for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
            uint k = param(i);
            y[i] = floatBitsToUint((field(x[i / PER], i) - zeroAt(k)) * scale[k]);
        }
        return;
    }
    for (uint w = gl_GlobalInvocationID.x; w < (p.n + PER - 1u) / PER; w += stride) {
        uint word = 0u;
        for (uint j = 0u; j < PER && w * PER + j < p.n; j++) {
            uint i = w * PER + j;
            uint k = param(i);
            float q = clamp(roundEven(quotient(uintBitsToFloat(x[i]), scale[k])) + zeroAt(k), float(LO), float(HI));
            word |= (uint(int(q)) & ((1u << BITS) - 1u)) << (uint(BITS) * j);
        }
        y[w] = word;
    }
}
