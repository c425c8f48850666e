// The storage types of a shader's tensors. Compiled with HALF defined
// (NAME_f16.spv), the float tensors a shader binds are float16_t and the
// tensors it copies as raw elements are 16-bit words, read and written
// through 16-bit storage (storageBuffer16BitAccess); otherwise they are
// float and 32-bit words. Arithmetic stays fp32 either way: a value is
// widened as it is read, float(x[i]), and rounded to the nearest fp16 as
// it is written, DATA(v). Buffers that hold partial sums, indices or
// params keep their own types.
#ifdef HALF
#extension GL_EXT_shader_16bit_storage : require
#define DATA float16_t
#define WORD uint16_t
#else
#define DATA float
#define WORD uint
#endif

// WEIGHT is the storage type of the constant weights of the products and
// convolutions: float16_t in NAME_f16w.spv, compiled with HALF_WEIGHTS
// (the fp16 weight mode: half the memory and bandwidth, widened as read),
// and in NAME_f16.spv; float otherwise.
#if defined(HALF_WEIGHTS) || defined(HALF)
#extension GL_EXT_shader_16bit_storage : require
#define WEIGHT float16_t
#else
#define WEIGHT float
#endif
