//go:build !noasm

// Packing of the fused attention's keys and values into the 16-wide strips
// of the AVX2 GEMM kernel (see attention_amd64.go). AVX2.

#include "textflag.h"

// func sdpaPackRowsAVX2(dst, src *float32, rows, ld int, scale float32)
//
// dst[16p+l] = scale·src[p·ld+l] for p < rows (positive), l < 16.
TEXT ·sdpaPackRowsAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ ld+24(FP), DX
	SHLQ $2, DX
	VBROADCASTSS scale+32(FP), Y15

prloop:
	VMULPS (SI), Y15, Y0
	VMULPS 32(SI), Y15, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ DX, SI
	ADDQ $64, DI
	DECQ CX
	JNZ prloop
	VZEROUPPER
	RET

// TRANSPOSE8 stores scale·(the 8×8 block of rows R9, R9+DX, ..., R9+7·DX,
// with R11 = 3·DX) transposed at DI+off, rows 64 bytes apart. It uses
// R10 and Y0–Y11; Y15 holds the scale.
#define TRANSPOSE8(off) \
	LEAQ (R9)(DX*4), R10 \
	VMULPS (R9), Y15, Y0 \
	VMULPS (R9)(DX*1), Y15, Y1 \
	VMULPS (R9)(DX*2), Y15, Y2 \
	VMULPS (R9)(R11*1), Y15, Y3 \
	VMULPS (R10), Y15, Y4 \
	VMULPS (R10)(DX*1), Y15, Y5 \
	VMULPS (R10)(DX*2), Y15, Y6 \
	VMULPS (R10)(R11*1), Y15, Y7 \
	VUNPCKLPS Y1, Y0, Y8 \
	VUNPCKHPS Y1, Y0, Y9 \
	VUNPCKLPS Y3, Y2, Y10 \
	VUNPCKHPS Y3, Y2, Y11 \
	VUNPCKLPS Y5, Y4, Y0 \
	VUNPCKHPS Y5, Y4, Y1 \
	VUNPCKLPS Y7, Y6, Y2 \
	VUNPCKHPS Y7, Y6, Y3 \
	VSHUFPS $0x44, Y10, Y8, Y4 \
	VSHUFPS $0xEE, Y10, Y8, Y5 \
	VSHUFPS $0x44, Y11, Y9, Y6 \
	VSHUFPS $0xEE, Y11, Y9, Y7 \
	VSHUFPS $0x44, Y2, Y0, Y8 \
	VSHUFPS $0xEE, Y2, Y0, Y9 \
	VSHUFPS $0x44, Y3, Y1, Y10 \
	VSHUFPS $0xEE, Y3, Y1, Y11 \
	VPERM2F128 $0x20, Y8, Y4, Y0 \
	VPERM2F128 $0x20, Y9, Y5, Y1 \
	VPERM2F128 $0x20, Y10, Y6, Y2 \
	VPERM2F128 $0x20, Y11, Y7, Y3 \
	VMOVUPS Y0, (off+0)(DI) \
	VMOVUPS Y1, (off+64)(DI) \
	VMOVUPS Y2, (off+128)(DI) \
	VMOVUPS Y3, (off+192)(DI) \
	VPERM2F128 $0x31, Y8, Y4, Y0 \
	VPERM2F128 $0x31, Y9, Y5, Y1 \
	VPERM2F128 $0x31, Y10, Y6, Y2 \
	VPERM2F128 $0x31, Y11, Y7, Y3 \
	VMOVUPS Y0, (off+256)(DI) \
	VMOVUPS Y1, (off+320)(DI) \
	VMOVUPS Y2, (off+384)(DI) \
	VMOVUPS Y3, (off+448)(DI)

// func sdpaPackColsAVX2(dst, src *float32, kc, ld int, scale float32)
//
// dst[16p+l] = scale·src[l·ld+p] for p < kc (a positive multiple of 8),
// l < 16: two 8×8 transposes per 8 steps.
TEXT ·sdpaPackColsAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ kc+16(FP), CX
	MOVQ ld+24(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R11
	MOVQ DX, R12
	SHLQ $3, R12
	VBROADCASTSS scale+32(FP), Y15
	SHRQ $3, CX

pcloop:
	MOVQ SI, R9
	TRANSPOSE8(0)
	ADDQ R12, R9
	TRANSPOSE8(32)
	ADDQ $32, SI
	ADDQ $512, DI
	DECQ CX
	JNZ pcloop
	VZEROUPPER
	RET

// func sdpaScaleRowsAVX2(c *float32, ldc, rows, cols int, f *float32)
//
// c[r·ldc+x] *= f[r] for r < rows (positive), x < cols (a positive
// multiple of 8).
TEXT ·sdpaScaleRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ c+0(FP), DI
	MOVQ ldc+8(FP), DX
	SHLQ $2, DX
	MOVQ rows+16(FP), CX
	MOVQ cols+24(FP), R8
	SHRQ $3, R8
	MOVQ f+32(FP), SI

srrow:
	VBROADCASTSS (SI), Y0
	MOVQ DI, R9
	MOVQ R8, R10

srcol:
	VMULPS (R9), Y0, Y1
	VMOVUPS Y1, (R9)
	ADDQ $32, R9
	DECQ R10
	JNZ srcol
	ADDQ DX, DI
	ADDQ $4, SI
	DECQ CX
	JNZ srrow
	VZEROUPPER
	RET
