// Reductions across a workgroup through subgroup operations, for the row
// kernels compiled with SUBGROUP (NAME_sg.spv, NAME_f16_sg.spv), which
// the backend picks on a device whose compute shaders have the basic and
// arithmetic subgroup operations. Each subgroup reduces its invocations'
// values with one subgroup operation, publishes the result in shared
// memory, and after one barrier every subgroup reduces the published
// partials itself, so that every invocation holds the result without a
// second barrier. The subgroup size and count are the device's
// (gl_SubgroupSize, gl_NumSubgroups), whatever they are.
//
// It declares the workgroup's size: 256 invocations, or what
// specialization constant 1 says (the backend's rowWorkgroup, from the
// subgroup size). Every invocation of the workgroup must call each
// reduction, in the same order. Successive
// reductions publish into alternate halves of part: reduction k + 2
// writes the half that reduction k read only after every invocation has
// passed the barrier of reduction k + 1, so one barrier per reduction
// suffices.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 256, local_size_x_id = 1) in;

shared uvec2 part[2][gl_WorkGroupSize.x];
uint turn = 0u;

// publish stores the subgroup's w, the same in each of its invocations,
// and returns the half of part that holds every subgroup's, once all are
// there.
uint publish(uvec2 w) {
    uint h = turn;
    turn ^= 1u;
    if (subgroupElect()) {
        part[h][gl_SubgroupID] = w;
    }
    barrier();
    return h;
}

// groupAdd returns the sum of every invocation's v.
float groupAdd(float v) {
    uint h = publish(uvec2(floatBitsToUint(subgroupAdd(v)), 0u));
    float r = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) {
        r += uintBitsToFloat(part[h][i].x);
    }
    return subgroupAdd(r);
}

// groupMul returns the product of every invocation's v.
float groupMul(float v) {
    uint h = publish(uvec2(floatBitsToUint(subgroupMul(v)), 0u));
    float r = 1.0;
    for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) {
        r *= uintBitsToFloat(part[h][i].x);
    }
    return subgroupMul(r);
}

// groupMax returns the largest of every invocation's v, none of them NaN.
float groupMax(float v) {
    uint h = publish(uvec2(floatBitsToUint(subgroupMax(v)), 0u));
    float r = -1.0 / 0.0;
    for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) {
        r = max(r, uintBitsToFloat(part[h][i].x));
    }
    return subgroupMax(r);
}

// groupKey returns the largest of every invocation's key, or the least
// when most is false.
uint groupKey(uint key, bool most) {
    uint h = publish(uvec2(most ? subgroupMax(key) : subgroupMin(key), 0u));
    uint r = most ? 0u : 0xFFFFFFFFu;
    for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) {
        r = most ? max(r, part[h][i].x) : min(r, part[h][i].x);
    }
    return most ? subgroupMax(r) : subgroupMin(r);
}

// orderKey maps a float that is not NaN to a uint of the same order, -0
// and +0 to one key: keys compare as the values do.
uint orderKey(float v) {
    uint u = floatBitsToUint(v);
    if ((u << 1) == 0u) {
        u = 0u;
    }
    return (u >> 31) != 0u ? ~u : u | 0x80000000u;
}

// keyValue is the float of orderKey's key k.
float keyValue(uint k) {
    return uintBitsToFloat((k >> 31) != 0u ? k & 0x7FFFFFFFu : ~k);
}
