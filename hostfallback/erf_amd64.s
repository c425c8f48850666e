//go:build !noasm

// Vectorised erf and exact GELU (see erf_amd64.go and erfF32). AVX2 and
// FMA. VMAXPS and VMINPS return their second source (Intel order) when
// either is NaN: with the argument there, NaN stays NaN.

#include "textflag.h"

// Constants of erfAVX2: 1/√2, the bounds of the argument, 1, ½, then the
// numerator's coefficients (highest degree first) and the denominator's.
DATA erfConst<>+0(SB)/4, $0.70710678118654752440
DATA erfConst<>+4(SB)/4, $4.0
DATA erfConst<>+8(SB)/4, $-4.0
DATA erfConst<>+12(SB)/4, $1.0
DATA erfConst<>+16(SB)/4, $0.5
DATA erfConst<>+20(SB)/4, $-2.72614225801306e-10
DATA erfConst<>+24(SB)/4, $2.77068142495902e-08
DATA erfConst<>+28(SB)/4, $-2.10102402082508e-06
DATA erfConst<>+32(SB)/4, $-5.69250639462346e-05
DATA erfConst<>+36(SB)/4, $-7.34990630326855e-04
DATA erfConst<>+40(SB)/4, $-2.95459980854025e-03
DATA erfConst<>+44(SB)/4, $-1.60960333262415e-02
DATA erfConst<>+48(SB)/4, $-1.45660718464996e-05
DATA erfConst<>+52(SB)/4, $-2.13374055278905e-04
DATA erfConst<>+56(SB)/4, $-1.68282697438203e-03
DATA erfConst<>+60(SB)/4, $-7.37332916720468e-03
DATA erfConst<>+64(SB)/4, $-1.42647390514189e-02
GLOBL erfConst<>(SB), RODATA|NOPTR, $68

// STEP(off) sets Y3 = Y2·Y3 + the constant at erfConst<>+off.
#define STEP(off) \
	VBROADCASTSS erfConst<>+off(SB), Y4 \
	VFMADD213PS Y4, Y2, Y3

// func erfAVX2(x, y *float32, n int, gelu bool)
TEXT ·erfAVX2(SB), NOSPLIT, $0-25
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	MOVBLZX gelu+24(FP), DX
	VBROADCASTSS erfConst<>+0(SB), Y15
	VBROADCASTSS erfConst<>+4(SB), Y14
	VBROADCASTSS erfConst<>+8(SB), Y13
	VBROADCASTSS erfConst<>+12(SB), Y12
	VBROADCASTSS erfConst<>+16(SB), Y11
	SHRQ $3, CX

loop:
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	TESTQ DX, DX
	JZ clamp
	VMULPS Y15, Y0, Y1

clamp:
	VMAXPS Y1, Y13, Y1
	VMINPS Y1, Y14, Y1
	VMULPS Y1, Y1, Y2
	// Y5 = q(x²), then Y3 = p(x²).
	VBROADCASTSS erfConst<>+48(SB), Y3
	STEP(52)
	STEP(56)
	STEP(60)
	STEP(64)
	VMOVAPS Y3, Y5
	VBROADCASTSS erfConst<>+20(SB), Y3
	STEP(24)
	STEP(28)
	STEP(32)
	STEP(36)
	STEP(40)
	STEP(44)
	VMULPS Y1, Y3, Y3
	VDIVPS Y5, Y3, Y3
	TESTQ DX, DX
	JZ store
	VADDPS Y12, Y3, Y3
	VMULPS Y0, Y3, Y3
	VMULPS Y11, Y3, Y3

store:
	VMOVUPS Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET
