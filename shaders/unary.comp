// Elementwise unary ops on fp32: y[i] = f(x[i]). The op is chosen by the
// specialization constant OP; alpha and beta are the op's attributes.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int RELU = 0;
const int SIGMOID = 1;
const int TANH = 2;
const int EXP = 3;
const int ABS = 4;
const int NEG = 5;
const int SQRT = 6;
const int ERF = 7;
const int HARDSWISH = 8;
const int LEAKYRELU = 9;
const int ELU = 10;
const int SELU = 11;
const int HARDSIGMOID = 12;
const int LOG = 13;
const int RECIPROCAL = 14;
const int FLOOR = 15;
const int CEIL = 16;
const int SOFTPLUS = 17;
const int SOFTSIGN = 18;
const int SIN = 19;
const int COS = 20;
const int GELU = 21;
const int MISH = 22;
const int ROUND = 23;
const int TAN = 24;
const int ASIN = 25;
const int ACOS = 26;
const int ATAN = 27;
const int SINH = 28;
const int COSH = 29;
const int ASINH = 30;
const int ACOSH = 31;
const int ATANH = 32;
const int THRESHOLDEDRELU = 33;
const int CELU = 34;
const int SHRINK = 35;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint n;
    float alpha;
    float beta;
} p;

// erf by Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7.
float erf_(float v) {
    float a = abs(v);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    float r = 1.0 - poly * exp(-a * a);
    return v < 0.0 ? -r : r;
}

// tanh clamped where it has saturated, so that exp cannot overflow.
float tanh_(float v) {
    if (isnan(v)) {
        return v;
    }
    float e = exp(2.0 * clamp(v, -15.0, 15.0));
    return (e - 1.0) / (e + 1.0);
}

// softplus as max(v, 0) + log(1 + e^-|v|): e^v never overflows.
float softplus_(float v) {
    return max(v, 0.0) + log(1.0 + exp(-abs(v)));
}

float f(float v) {
    switch (OP) {
    case RELU: return v < 0.0 ? 0.0 : v;
    case SIGMOID: return 1.0 / (1.0 + exp(-v));
    case TANH: return tanh_(v);
    case EXP: return exp(v);
    case ABS: return abs(v);
    case NEG: return -v;
    case SQRT: return sqrt(v);
    case ERF: return erf_(v);
    case HARDSWISH: return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
    case LEAKYRELU: return v < 0.0 ? p.alpha * v : v;
    case ELU: return v < 0.0 ? p.alpha * (exp(v) - 1.0) : v;
    case SELU: return v <= 0.0 ? p.beta * (p.alpha * exp(v) - p.alpha) : p.beta * v;
    case HARDSIGMOID: return isnan(v) ? v : clamp(p.alpha * v + p.beta, 0.0, 1.0);
    case LOG: return log(v);
    case RECIPROCAL: return 1.0 / v;
    case FLOOR: return floor(v);
    case CEIL: return ceil(v);
    case SOFTPLUS: return v > 20.0 ? v : log(1.0 + exp(v));
    case SOFTSIGN: return v / (1.0 + abs(v));
    case SIN: return sin(v);
    case COS: return cos(v);
    case GELU:
        if (p.alpha != 0.0) {
            return 0.5 * v * (1.0 + tanh_(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        }
        return 0.5 * v * (1.0 + erf_(v * 0.7071067811865476));
    case MISH: return v * tanh_(softplus_(v));
    case ROUND: return roundEven(v);
    case TAN: return tan(v);
    case ASIN: return asin(v);
    case ACOS: return acos(v);
    case ATAN: return isnan(v) ? v : atan(v);
    case SINH: return sinh(v);
    case COSH: return cosh(v);
    case ASINH: return abs(v) > 1.0e18 ? sign(v) * (log(abs(v)) + 0.6931471805599453) : asinh(v);
    case ACOSH: return v < 1.0 ? 0.0 / 0.0 : (v > 1.0e18 ? log(v) + 0.6931471805599453 : acosh(v));
    case ATANH: return atanh(v);
    case THRESHOLDEDRELU: return v > p.alpha ? v : 0.0;
    case CELU: return v < 0.0 ? p.alpha * (exp(v / p.alpha) - 1.0) : v;
    case SHRINK: return v < -p.alpha ? v + p.beta : (v > p.alpha ? v - p.beta : 0.0);
    }
    return v;
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        y[i] = f(x[i]);
    }
}
