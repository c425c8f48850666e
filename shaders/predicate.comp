// Ops with a bool result on numpy-broadcast inputs: the comparisons of
// float32 (F), int32 (I), int64 (L, pairs of 32-bit words, low first),
// unsigned bytes (B: bool, uint8), signed bytes (S: int8) or float16 (H);
// And, Or, Xor and Not of bools; IsNaN and IsInf of float32 and float16.
// OP is 16 * type + op with F = 0, I = 1, L = 2, B = 3, S = 4, H = 5.
// Bytes and float16 are read through 32-bit words (a float16 widened to
// float32 exactly) and bytes written so: invocation w writes word w of y,
// elements 4w .. 4w+3.
// Output dims and the element strides of a and b (0 along broadcast dims)
// come as push constants, up to rank 8; the unary ops read a only.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int TYPE = OP / 16;
const int FN = OP % 16;

const int F = 0;
const int I = 1;
const int L = 2;
const int B = 3;
const int S = 4;
const int H = 5;

const int EQ = 0;
const int LT = 1;
const int LE = 2;
const int GT = 3;
const int GE = 4;
const int AND = 5;
const int OR = 6;
const int XOR = 7;
const int NOT = 8;
const int ISNAN = 9;
// ISINF + 1 detects +inf, ISINF + 2 detects -inf, ISINF + 3 both.
const int ISINF = 10;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer Bv { uint b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint dims[8];
    uint sa[8];
    uint sb[8];
} p;

uint byteA(uint i) { return (a[i >> 2] >> (8u * (i & 3u))) & 0xffu; }
uint byteB(uint i) { return (b[i >> 2] >> (8u * (i & 3u))) & 0xffu; }

// widen returns the float32 bits of the float16 in half k of word w.
uint widen(uint w, uint k) { return floatBitsToUint(unpackHalf2x16(w >> (16u * k)).x); }

// floatA and floatB return the float32 bits of element i of a or b.
uint floatA(uint i) { return TYPE == H ? widen(a[i >> 1], i & 1u) : a[i]; }
uint floatB(uint i) { return TYPE == H ? widen(b[i >> 1], i & 1u) : b[i]; }

// order returns -1, 0 or 1 as element ia of a is below, equal to or above
// element ib of b, and 2 when they are unordered (a NaN).
int order(uint ia, uint ib) {
    if (TYPE == F || TYPE == H) {
        uint xb = floatA(ia);
        uint vb = floatB(ib);
        if ((xb & 0x7fffffffu) > 0x7f800000u || (vb & 0x7fffffffu) > 0x7f800000u) {
            return 2;
        }
        float x = uintBitsToFloat(xb);
        float v = uintBitsToFloat(vb);
        return x < v ? -1 : x > v ? 1 : 0;
    }
    if (TYPE == I) {
        int x = int(a[ia]);
        int v = int(b[ib]);
        return x < v ? -1 : x > v ? 1 : 0;
    }
    if (TYPE == L) {
        int xh = int(a[2u * ia + 1u]);
        int vh = int(b[2u * ib + 1u]);
        if (xh != vh) {
            return xh < vh ? -1 : 1;
        }
        uint xl = a[2u * ia];
        uint vl = b[2u * ib];
        return xl < vl ? -1 : xl > vl ? 1 : 0;
    }
    int x = int(byteA(ia));
    int v = int(byteB(ib));
    if (TYPE == S) {
        x = (x ^ 0x80) - 0x80;
        v = (v ^ 0x80) - 0x80;
    }
    return x < v ? -1 : x > v ? 1 : 0;
}

uint f(uint ia, uint ib) {
    switch (FN) {
    case AND: return byteA(ia) & byteB(ib);
    case OR: return byteA(ia) | byteB(ib);
    case XOR: return byteA(ia) ^ byteB(ib);
    case NOT: return byteA(ia) == 0u ? 1u : 0u;
    case ISNAN: return (floatA(ia) & 0x7fffffffu) > 0x7f800000u ? 1u : 0u;
    case ISINF + 1: return floatA(ia) == 0x7f800000u ? 1u : 0u;
    case ISINF + 2: return floatA(ia) == 0xff800000u ? 1u : 0u;
    case ISINF + 3: return (floatA(ia) & 0x7fffffffu) == 0x7f800000u ? 1u : 0u;
    case ISINF: return 0u;
    }
    int o = order(ia, ib);
    switch (FN) {
    case EQ: return o == 0 ? 1u : 0u;
    case LT: return o == -1 ? 1u : 0u;
    case LE: return o == -1 || o == 0 ? 1u : 0u;
    case GT: return o == 1 ? 1u : 0u;
    case GE: return o == 1 || o == 0 ? 1u : 0u;
    }
    return 0u;
}

void main() {
    uint words = (p.n + 3u) / 4u;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
        uint word = 0u;
        for (uint k = 0u; k < 4u && 4u * w + k < p.n; k++) {
            uint rest = 4u * w + k;
            uint ia = 0u;
            uint ib = 0u;
            for (int d = int(p.rank) - 1; d >= 0; d--) {
                uint c = rest % p.dims[d];
                rest /= p.dims[d];
                ia += c * p.sa[d];
                ib += c * p.sb[d];
            }
            word |= f(ia, ib) << (8u * k);
        }
        y[w] = word;
    }
}
