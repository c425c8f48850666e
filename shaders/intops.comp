// Exact integer elementwise ops with numpy broadcasting, y = f(a, b), on
// int32 (I), int64 (L), uint32 (U) or uint64 (V), and Sign of float32 (F).
// 64-bit elements are pairs of 32-bit words, low first. OP is 16 * type +
// op with I = 0, L = 1, U = 2, V = 3, F = 4. Arithmetic wraps; division
// truncates toward zero, and a zero divisor gives 0 (ONNX leaves it
// undefined); shifts by the width or more give 0. Output dims and the
// element strides of a and b (0 along broadcast dims) come as push
// constants, up to rank 8; the unary ops read a only.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int TYPE = OP / 16;
const int FN = OP % 16;

const int I = 0;
const int L = 1;
const int U = 2;
const int V = 3;
const int F = 4;

const bool WIDE = TYPE == L || TYPE == V;
const bool SIGNED = TYPE == I || TYPE == L;

const int ADD = 0;
const int SUB = 1;
const int MUL = 2;
const int DIV = 3;
// MOD takes the divisor's sign, FMOD the dividend's.
const int MOD = 4;
const int FMOD = 5;
const int MAX = 6;
const int MIN = 7;
const int SHL = 8;
const int SHR = 9;
const int NEG = 10;
const int ABS = 11;
const int SIGN = 12;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint rank;
    uint dims[8];
    uint sa[8];
    uint sb[8];
} p;

uint op32(uint x, uint v) {
    switch (FN) {
    case ADD: return x + v;
    case SUB: return x - v;
    case MUL: return x * v;
    case DIV:
        if (v == 0u) {
            return 0u;
        }
        if (!SIGNED) {
            return x / v;
        }
        return int(v) == -1 ? 0u - x : uint(int(x) / int(v));
    case MOD:
    case FMOD:
        if (v == 0u) {
            return 0u;
        }
        if (!SIGNED) {
            return x % v;
        }
        if (int(v) == -1) {
            return 0u;
        }
        int r = int(x) - int(x) / int(v) * int(v);
        if (FN == MOD && r != 0 && (r < 0) != (int(v) < 0)) {
            r += int(v);
        }
        return uint(r);
    case MAX: return SIGNED ? uint(max(int(x), int(v))) : max(x, v);
    case MIN: return SIGNED ? uint(min(int(x), int(v))) : min(x, v);
    case SHL: return v >= 32u ? 0u : x << v;
    case SHR: return v >= 32u ? 0u : x >> v;
    case NEG: return 0u - x;
    case ABS: return int(x) < 0 ? 0u - x : x;
    case SIGN:
        if (TYPE == F) {
            uint m = x & 0x7fffffffu;
            return m == 0u || m > 0x7f800000u ? x : (x & 0x80000000u) | 0x3f800000u;
        }
        return int(x) > 0 ? 1u : int(x) < 0 ? 0xffffffffu : 0u;
    }
    return x;
}

uvec2 add64(uvec2 x, uvec2 v) {
    uint c;
    uint lo = uaddCarry(x.x, v.x, c);
    return uvec2(lo, x.y + v.y + c);
}

uvec2 sub64(uvec2 x, uvec2 v) {
    uint c;
    uint lo = usubBorrow(x.x, v.x, c);
    return uvec2(lo, x.y - v.y - c);
}

uvec2 mul64(uvec2 x, uvec2 v) {
    uint hi, lo;
    umulExtended(x.x, v.x, hi, lo);
    return uvec2(lo, hi + x.x * v.y + x.y * v.x);
}

bool negative(uvec2 x) { return SIGNED && int(x.y) < 0; }

// less compares as TYPE: signed or unsigned.
bool less(uvec2 x, uvec2 v) {
    if (x.y != v.y) {
        return SIGNED ? int(x.y) < int(v.y) : x.y < v.y;
    }
    return x.x < v.x;
}

bool ult(uvec2 x, uvec2 v) { return x.y != v.y ? x.y < v.y : x.x < v.x; }

// udiv divides n by d ≠ 0 as unsigned: the quotient, and the remainder in r.
uvec2 udiv(uvec2 n, uvec2 d, out uvec2 r) {
    if (n.y == 0u && d.y == 0u) {
        r = uvec2(n.x % d.x, 0u);
        return uvec2(n.x / d.x, 0u);
    }
    uvec2 q = uvec2(0u);
    r = uvec2(0u);
    for (int i = 63; i >= 0; i--) {
        bool carry = (r.y >> 31) != 0u;
        uint bit = i >= 32 ? (n.y >> (i - 32)) & 1u : (n.x >> i) & 1u;
        r = uvec2((r.x << 1) | bit, (r.y << 1) | (r.x >> 31));
        if (carry || !ult(r, d)) {
            r = sub64(r, d);
            if (i >= 32) {
                q.y |= 1u << (i - 32);
            } else {
                q.x |= 1u << i;
            }
        }
    }
    return q;
}

uvec2 shift(uvec2 x, uvec2 v) {
    if (v.y != 0u || v.x >= 64u) {
        return uvec2(0u);
    }
    uint s = v.x;
    if (s == 0u) {
        return x;
    }
    if (FN == SHL) {
        return s < 32u ? uvec2(x.x << s, (x.y << s) | (x.x >> (32u - s))) : uvec2(0u, x.x << (s - 32u));
    }
    return s < 32u ? uvec2((x.x >> s) | (x.y << (32u - s)), x.y >> s) : uvec2(x.y >> (s - 32u), 0u);
}

uvec2 op64(uvec2 x, uvec2 v) {
    const uvec2 zero = uvec2(0u);
    switch (FN) {
    case ADD: return add64(x, v);
    case SUB: return sub64(x, v);
    case MUL: return mul64(x, v);
    case DIV:
    case MOD:
    case FMOD: {
        if (v == zero) {
            return zero;
        }
        bool nx = negative(x);
        bool nv = negative(v);
        uvec2 r;
        uvec2 q = udiv(nx ? sub64(zero, x) : x, nv ? sub64(zero, v) : v, r);
        if (FN == DIV) {
            return nx != nv ? sub64(zero, q) : q;
        }
        r = nx ? sub64(zero, r) : r;
        if (FN == MOD && r != zero && negative(r) != nv) {
            r = add64(r, v);
        }
        return r;
    }
    case MAX: return less(x, v) ? v : x;
    case MIN: return less(v, x) ? v : x;
    case SHL:
    case SHR: return shift(x, v);
    case NEG: return sub64(zero, x);
    case ABS: return negative(x) ? sub64(zero, x) : x;
    case SIGN: return negative(x) ? uvec2(0xffffffffu) : x == zero ? zero : uvec2(1u, 0u);
    }
    return x;
}

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
        if (WIDE) {
            uvec2 r = op64(uvec2(a[2u * ia], a[2u * ia + 1u]), uvec2(b[2u * ib], b[2u * ib + 1u]));
            y[2u * i] = r.x;
            y[2u * i + 1u] = r.y;
        } else {
            y[i] = op32(a[ia], b[ib]);
        }
    }
}
