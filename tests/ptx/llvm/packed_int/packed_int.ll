; Packed 16-bit integer lanes and .relu (issue 43, item 2): LLVM 22.1 (llvmlite) writes
; add/min/max.{s16x2,u16x2} and min/max.relu.{s32,s16x2} at sm_90 only with PTX 8.0
; (`-mattr=+ptx80`; its default for sm_90 is PTX 7.8, where it splits the lanes):
;   target.create_target_machine(cpu="sm_90", features="+ptx80", opt=2)  ->  packed_int_lite_ptx80_O2.ptx
declare <2 x i16> @llvm.smax.v2i16(<2 x i16>, <2 x i16>)
declare <2 x i16> @llvm.smin.v2i16(<2 x i16>, <2 x i16>)
declare <2 x i16> @llvm.umax.v2i16(<2 x i16>, <2 x i16>)
declare <2 x i16> @llvm.umin.v2i16(<2 x i16>, <2 x i16>)
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.smax.i32(i32, i32)

define <2 x i16> @add2(<2 x i16> %a, <2 x i16> %b) {
  %r = add <2 x i16> %a, %b
  ret <2 x i16> %r
}

define <2 x i16> @smax2(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.smax.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}

define <2 x i16> @smin2(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.smin.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}

define <2 x i16> @umax2(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.umax.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}

define <2 x i16> @umin2(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.umin.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}

define i32 @min_relu32(i32 %a, i32 %b) {
  %m = call i32 @llvm.smin.i32(i32 %a, i32 %b)
  %r = call i32 @llvm.smax.i32(i32 %m, i32 0)
  ret i32 %r
}

define i32 @max_relu32(i32 %a, i32 %b) {
  %m = call i32 @llvm.smax.i32(i32 %a, i32 %b)
  %r = call i32 @llvm.smax.i32(i32 %m, i32 0)
  ret i32 %r
}

define <2 x i16> @min_relu2(<2 x i16> %a, <2 x i16> %b) {
  %m = call <2 x i16> @llvm.smin.v2i16(<2 x i16> %a, <2 x i16> %b)
  %r = call <2 x i16> @llvm.smax.v2i16(<2 x i16> %m, <2 x i16> zeroinitializer)
  ret <2 x i16> %r
}

define <2 x i16> @max_relu2(<2 x i16> %a, <2 x i16> %b) {
  %m = call <2 x i16> @llvm.smax.v2i16(<2 x i16> %a, <2 x i16> %b)
  %r = call <2 x i16> @llvm.smax.v2i16(<2 x i16> %m, <2 x i16> zeroinitializer)
  ret <2 x i16> %r
}
