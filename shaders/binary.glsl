// The elementwise binary ops on fp32, shared by binary.comp and
// chain.comp: binaryOp(op, x, v) with op one of the codes below (the OP of
// binary.comp). B_NAME is the code of the ONNX op whose name in capitals
// is NAME: backend/vulkan reads the codes from here (shaders.Constants).
// Div rounds as the CPU's IEEE 754 division does (quotient.glsl): OpFDiv
// may err by 2.5 ulp (NVIDIA's does by 1), and a graph that rounds a
// quotient again to an integer (an expanded DynamicQuantizeLinear's scale
// and zero point) then lands across a tie from the CPU's result.

#include "quotient.glsl"

const int B_ADD = 0;
const int B_SUB = 1;
const int B_MUL = 2;
const int B_DIV = 3;
const int B_POW = 4;
const int B_MAX = 5;
const int B_MIN = 6;
const int B_PRELU = 7;
const int B_MOD = 8;

// pow_ follows C's pow (and Go's math.Pow) in its special cases: x^0 and
// 1^e are 1 even for NaN, (-1)^±inf is 1, and ±0 to an odd integer keeps
// its sign.
float pow_(float x, float e) {
    if (e == 0.0 || x == 1.0) {
        return 1.0;
    }
    if (isnan(x) || isnan(e)) {
        return x + e;
    }
    bool odd = e == floor(e) && mod(e, 2.0) == 1.0;
    if (x == 0.0) {
        if (e < 0.0) {
            return odd ? 1.0 / x : 1.0 / 0.0;
        }
        return odd ? x : 0.0;
    }
    if (x == -1.0 && isinf(e)) {
        return 1.0;
    }
    if (x > 0.0) {
        return pow(x, e);
    }
    if (isinf(x)) {
        float r = e > 0.0 ? 1.0 / 0.0 : 0.0;
        return odd ? -r : r;
    }
    if (e != floor(e)) {
        return 0.0 / 0.0;
    }
    float r = pow(-x, e);
    return odd ? -r : r;
}

// split_ cuts v into a high half of 12 significant bits and the rest
// (Veltkamp), so that products of halves are exact.
vec2 split_(float v) {
    precise float t = 4097.0 * v;
    precise float hi = t - (t - v);
    precise float lo = v - hi;
    return vec2(hi, lo);
}

// fmodScaled is fmod_ for finite x and y with q = trunc(x/y) not 0 (see
// fmod_).
float fmodScaled(float x, float y, float q) {
    vec2 a = split_(q);
    vec2 b = split_(y);
    precise float p = q * y;
    precise float e = ((a.x * b.x - p) + a.x * b.y + a.y * b.x) + a.y * b.y;
    precise float r = (x - p) - e;
    float ay = abs(y);
    if (r != 0.0 && (r < 0.0) != (x < 0.0)) {
        r += x < 0.0 ? -ay : ay;
    }
    if (abs(r) >= ay) {
        r -= x < 0.0 ? -ay : ay;
    }
    return r;
}

// fmod_ is C's fmod: x - trunc(x/y)*y with the sign of x, exact like C's.
// The product q*y is formed exactly as p + e (Dekker; no fused multiply-add
// is assumed), and a quotient off by one is corrected: x/y may be rounded
// across an integer, and Vulkan lets a driver's division be 2.5 ULP off
// (NVIDIA's x/x can be just below 1, so a quotient that truncates to 0 is
// trusted only when |x| < |y|). A divisor beyond 2^113 would overflow the
// split, so such operands are scaled by 2^-40 first (exact: both stay
// normal).
float fmod_(float x, float y) {
    if (isinf(y) && !isinf(x) && !isnan(x)) {
        return x;
    }
    if (abs(x) < abs(y)) {
        return x;
    }
    float q = trunc(x / y);
    if (q == 0.0) {
        q = (x < 0.0) != (y < 0.0) ? -1.0 : 1.0;
    }
    if (abs(y) > 1.0e34 && !isinf(x) && !isnan(y)) {
        float s = exp2(-40.0);
        return fmodScaled(x * s, y * s, q) / s;
    }
    return fmodScaled(x, y, q);
}

float binaryOp(int op, float x, float v) {
    switch (op) {
    case B_ADD: return x + v;
    case B_SUB: return x - v;
    case B_MUL: return x * v;
    case B_DIV: return quotient(x, v);
    case B_POW: return pow_(x, v);
    case B_MAX: return isnan(x) || isnan(v) ? x + v : max(x, v);
    case B_MIN: return isnan(x) || isnan(v) ? x + v : min(x, v);
    case B_PRELU: return x < 0.0 ? v * x : x;
    case B_MOD: return fmod_(x, v);
    }
    return x;
}

