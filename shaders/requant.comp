// The requantization of QLinearConv and QLinearMatMul: integer.comp's
// int32 sums acc, plus the int32 bias where bound (wrapping, as the CPU
// kernel adds it), to a uint8 or int8 y:
//
//   y = clamp(roundEven(float(acc + bias) * m) + y_zero_point, LO, HI),
//   m = a_scale * b_scale / y_scale,
//
// in float32 as ONNX Runtime requantizes. The CPU kernel computes in
// float64; a product within a few float32 ulps of a rounding tie may round
// the other way, so results may differ from it by one quantization unit
// (these ops' ops.Tolerance.Units).
//
// OP is SIGNED (1, int8 y) + BIAS (2, bias bound) + ZERO (4, y_zero_point
// bound). Element i takes a_scale (i / p.ad) % p.an, b_scale
// (i / p.bd) % p.bs and bias (i / p.bd) % p.bn: p.an and p.bs are 1 for
// scales per tensor. y is packed in 32-bit words (element i is byte i % 4
// of word i / 4); one invocation writes one word.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const bool SIGNED = (OP & 1) != 0;
const bool BIAS = (OP & 2) != 0;
const bool ZERO = (OP & 4) != 0;
const float LO = SIGNED ? -128.0 : 0.0;
const float HI = SIGNED ? 127.0 : 255.0;

layout(std430, set = 0, binding = 0) readonly buffer Acc { int acc[]; };
layout(std430, set = 0, binding = 1) readonly buffer AS { float ascale[]; };
layout(std430, set = 0, binding = 2) readonly buffer BS { float bscale[]; };
layout(std430, set = 0, binding = 3) readonly buffer YS { float yscale[]; };
layout(std430, set = 0, binding = 4) readonly buffer YZ { uint yzero[]; };
layout(std430, set = 0, binding = 5) readonly buffer Bias { int bias[]; };
layout(std430, set = 0, binding = 6) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint total;
    uint ad;
    uint an;
    uint bd;
    uint bn;
    uint bs;
} p;

void main() {
    float zp = 0.0;
    if (ZERO) {
        zp = SIGNED ? float(bitfieldExtract(int(yzero[0]), 0, 8)) : float(yzero[0] & 255u);
    }
    uint stride = gl_NumWorkGroups.x * 256u;
    uint words = (p.total + 3u) / 4u;
    for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
        uint word = 0u;
        for (uint e = 0u; e < 4u; e++) {
            uint i = w * 4u + e;
            if (i >= p.total) {
                break;
            }
            uint c = i / p.bd;
            int v = acc[i];
            if (BIAS) {
                v += bias[c % p.bn];
            }
            float m = ascale[(i / p.ad) % p.an] * bscale[c % p.bs] / yscale[0];
            float q = clamp(roundEven(float(v) * m) + zp, LO, HI);
            word |= (uint(int(q)) & 255u) << (8u * e);
        }
        y[w] = word;
    }
}
