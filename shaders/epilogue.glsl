// The store of the convolutions (conv.comp, convgemm.comp, dwconv.comp),
// included after their declarations of y, bias and sum, of ACT (the
// activation, act.glsl) and of the push constants p with flags (bit 0:
// bias is bound; bit 1: sum is bound), alpha and beta (the activation's
// parameters).

// epilogue adds the bias of channel mi and the Sum at output index at to
// v, applies the activation and stores it.
void epilogue(uint at, uint mi, float v) {
    if ((p.flags & 1u) != 0u) {
        v += float(bias[mi]);
    }
    if ((p.flags & 2u) != 0u) {
        v += float(sum[at]);
    }
    y[at] = DATA(act(ACT, v, p.alpha, p.beta));
}
