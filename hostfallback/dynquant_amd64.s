//go:build !noasm

// DynamicQuantizeLinear's loops (see dynquant_amd64.go), eight float32s
// at a time.

#include "textflag.h"

// func dynQuantRangeAVX2(x *float32, n int) (lo, hi float32, nan bool)
TEXT ·dynQuantRangeAVX2(SB), NOSPLIT, $0-25
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2

rangeloop:
	VMOVUPS 0(SI), Y3
	VMINPS Y3, Y0, Y0
	VMAXPS Y3, Y1, Y1
	VCMPPS $3, Y3, Y3, Y4
	VORPS Y4, Y2, Y2
	ADDQ $32, SI
	DECQ CX
	JNZ rangeloop

	VEXTRACTF128 $1, Y0, X3
	VMINPS X3, X0, X0
	VPERMILPS $0x4e, X0, X3
	VMINPS X3, X0, X0
	VPERMILPS $0xb1, X0, X3
	VMINPS X3, X0, X0
	VEXTRACTF128 $1, Y1, X3
	VMAXPS X3, X1, X1
	VPERMILPS $0x4e, X1, X3
	VMAXPS X3, X1, X1
	VPERMILPS $0xb1, X1, X3
	VMAXPS X3, X1, X1
	VMOVSS X0, lo+16(FP)
	VMOVSS X1, hi+20(FP)
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	SETNE nan+24(FP)
	VZEROUPPER
	RET

// func dynQuantizeAVX2(y *uint8, x *float32, n int, scale, zp float32)
TEXT ·dynQuantizeAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	VBROADCASTSS scale+24(FP), Y5
	VBROADCASTSS zp+28(FP), Y6
	VXORPS Y7, Y7, Y7
	MOVL $0x437f0000, AX // 255
	VMOVD AX, X8
	VBROADCASTSS X8, Y8

quantloop:
	VMOVUPS 0(SI), Y0
	VDIVPS Y5, Y0, Y0
	VROUNDPS $0, Y0, Y0
	VADDPS Y6, Y0, Y0
	VMAXPS Y7, Y0, Y0
	VMINPS Y8, Y0, Y0
	VCVTPS2DQ Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKUSDW X1, X0, X0
	VPACKUSWB X0, X0, X0
	VMOVQ X0, 0(DI)
	ADDQ $32, SI
	ADDQ $8, DI
	DECQ CX
	JNZ quantloop
	VZEROUPPER
	RET
