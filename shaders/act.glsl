// The activations that the convolutions (conv.comp, convgemm.comp,
// dwconv.comp) apply in their store: act(op, v, alpha, beta) with op one
// of the codes below (bits 8-15 of their push constants' flags, see
// epilogue.glsl) and alpha and beta the activation's parameters (Clip's
// bounds, LeakyRelu's slope in alpha, HardSigmoid's slope and offset;
// HardSwish's are fixed, 1/6 and 0.5). ACT_NAME is the code of the
// FusedConv activation whose name in capitals is NAME, ACT_NONE that of
// none (""): backend/vulkan reads the codes from here (shaders.Constants).
// Relu and Clip keep NaN, as the CPU kernels do (GLSL's min and max leave
// NaN undefined).

const int ACT_NONE = 0;
const int ACT_RELU = 1;
const int ACT_CLIP = 2;
const int ACT_LEAKYRELU = 3;
const int ACT_SIGMOID = 4;
const int ACT_SWISH = 5;
const int ACT_HARDSIGMOID = 6;
const int ACT_HARDSWISH = 7;

// hardSigmoid is max(0, min(1, alpha·v + beta)); NaN stays NaN.
float hardSigmoid(float v, float alpha, float beta) {
    float h = alpha * v + beta;
    return h < 0.0 ? 0.0 : (h > 1.0 ? 1.0 : h);
}

float act(int op, float v, float alpha, float beta) {
    switch (op) {
    case ACT_RELU: return v < 0.0 ? 0.0 : v;
    case ACT_CLIP: return v < alpha ? alpha : (v > beta ? beta : v);
    case ACT_LEAKYRELU: return v < 0.0 ? alpha * v : v;
    case ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case ACT_SWISH: return v / (1.0 + exp(-v));
    case ACT_HARDSIGMOID: return hardSigmoid(v, alpha, beta);
    case ACT_HARDSWISH: return v * hardSigmoid(v, 1.0 / 6.0, 0.5);
    }
    return v;
}
