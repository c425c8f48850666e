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

// COEF(off) broadcasts the constant at erfConst<>+off into Y4.
#define COEF(off) VBROADCASTSS erfConst<>+off(SB), Y4

// STEP2(off) steps both blocks' polynomials, r = x²·r + the constant at
// erfConst<>+off, in Y3 (x² in Y2) and Y9 (x² in Y8).
#define STEP2(off) \
	COEF(off) \
	VFMADD213PS Y4, Y2, Y3 \
	VFMADD213PS Y4, Y8, Y9

// ARG(x, t, sq) sets t to x (times 1/√2 for GELU, DX set) clamped to
// [−4, 4] and sq to t².
#define ARG(x, t, sq) \
	VMOVAPS x, t \
	TESTQ DX, DX \
	JZ 2(PC) \
	VMULPS Y15, x, t \
	VMAXPS t, Y13, t \
	VMINPS t, Y14, t \
	VMULPS t, t, sq

// FINISH(x, t, p, q) sets p to t·p/q and, for GELU (DX set), to
// (1 + p)·x·½.
#define FINISH(x, t, p, q) \
	VMULPS t, p, p \
	VDIVPS q, p, p \
	TESTQ DX, DX \
	JZ 4(PC) \
	VADDPS Y12, p, p \
	VMULPS x, p, p \
	VMULPS Y11, p, p

// func erfAVX2(x, y *float32, n int, gelu bool)
//
// Blocks of 16 as two independent blocks of 8 (their polynomials
// interleaved, each coefficient broadcast once for both), then one of 8:
// the polynomials are chains of dependent FMAs, and one block alone
// leaves the FMA units idle waiting on them.
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

wide:
	CMPQ CX, $16
	JLT narrow
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y6
	ARG(Y0, Y1, Y2)
	ARG(Y6, Y7, Y8)
	// Y5, Y10 = q(x²), then Y3, Y9 = p(x²).
	VBROADCASTSS erfConst<>+48(SB), Y3
	VMOVAPS Y3, Y9
	STEP2(52)
	STEP2(56)
	STEP2(60)
	STEP2(64)
	VMOVAPS Y3, Y5
	VMOVAPS Y9, Y10
	VBROADCASTSS erfConst<>+20(SB), Y3
	VMOVAPS Y3, Y9
	STEP2(24)
	STEP2(28)
	STEP2(32)
	STEP2(36)
	STEP2(40)
	STEP2(44)
	FINISH(Y0, Y1, Y3, Y5)
	FINISH(Y6, Y7, Y9, Y10)
	VMOVUPS Y3, (DI)
	VMOVUPS Y9, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP wide

narrow:
	TESTQ CX, CX
	JZ done
	VMOVUPS (SI), Y0
	ARG(Y0, Y1, Y2)
	VBROADCASTSS erfConst<>+48(SB), Y3
	COEF(52)
	VFMADD213PS Y4, Y2, Y3
	COEF(56)
	VFMADD213PS Y4, Y2, Y3
	COEF(60)
	VFMADD213PS Y4, Y2, Y3
	COEF(64)
	VFMADD213PS Y4, Y2, Y3
	VMOVAPS Y3, Y5
	VBROADCASTSS erfConst<>+20(SB), Y3
	COEF(24)
	VFMADD213PS Y4, Y2, Y3
	COEF(28)
	VFMADD213PS Y4, Y2, Y3
	COEF(32)
	VFMADD213PS Y4, Y2, Y3
	COEF(36)
	VFMADD213PS Y4, Y2, Y3
	COEF(40)
	VFMADD213PS Y4, Y2, Y3
	COEF(44)
	VFMADD213PS Y4, Y2, Y3
	FINISH(Y0, Y1, Y3, Y5)
	VMOVUPS Y3, (DI)

done:
	VZEROUPPER
	RET
