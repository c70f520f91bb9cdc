; NVVM intrinsics (the forms LLVM's NVPTX tests and clang's CUDA headers use: directed
; rounding, conversions, fast-math, bit operations) and i128/bf16 arithmetic, for ptxsmt's
; function corpus. Separate from scalar.ll: a build that rejects one of these costs only this
; file. Each intrinsic is one PTX instruction, defined on every input.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define float @add_rm(float %a, float %b) {
  %r = call float @llvm.nvvm.add.rm.f(float %a, float %b)
  ret float %r
}
define float @add_rz_ftz(float %a, float %b) {
  %r = call float @llvm.nvvm.add.rz.ftz.f(float %a, float %b)
  ret float %r
}
define float @mul_rp(float %a, float %b) {
  %r = call float @llvm.nvvm.mul.rp.f(float %a, float %b)
  ret float %r
}
define double @fma_rz_d(double %a, double %b, double %c) {
  %r = call double @llvm.nvvm.fma.rz.d(double %a, double %b, double %c)
  ret double %r
}
define float @div_rn(float %a, float %b) {
  %r = call float @llvm.nvvm.div.rn.f(float %a, float %b)
  ret float %r
}
define float @div_approx(float %a, float %b) {
  %r = call float @llvm.nvvm.div.approx.f(float %a, float %b)
  ret float %r
}
define float @rcp_rn(float %a) {
  %r = call float @llvm.nvvm.rcp.rn.f(float %a)
  ret float %r
}
define float @sqrt_rn(float %a) {
  %r = call float @llvm.nvvm.sqrt.rn.f(float %a)
  ret float %r
}
define float @fmin_ftz(float %a, float %b) {
  %r = call float @llvm.nvvm.fmin.ftz.f(float %a, float %b)
  ret float %r
}
define float @fmax_nvvm(float %a, float %b) {
  %r = call float @llvm.nvvm.fmax.f(float %a, float %b)
  ret float %r
}
define float @saturate(float %a) {
  %r = call float @llvm.nvvm.saturate.f(float %a)
  ret float %r
}
define i32 @f2i_rz(float %a) {
  %r = call i32 @llvm.nvvm.f2i.rz(float %a)
  ret i32 %r
}
define i32 @f2ui_rm(float %a) {
  %r = call i32 @llvm.nvvm.f2ui.rm(float %a)
  ret i32 %r
}
define i64 @d2ll_rn(double %a) {
  %r = call i64 @llvm.nvvm.d2ll.rn(double %a)
  ret i64 %r
}
define float @i2f_rz(i32 %a) {
  %r = call float @llvm.nvvm.i2f.rz(i32 %a)
  ret float %r
}
define double @ll2d_rz(i64 %a) {
  %r = call double @llvm.nvvm.ll2d.rz(i64 %a)
  ret double %r
}
define float @ui2f_rz(i32 %a) {
  %r = call float @llvm.nvvm.ui2f.rz(i32 %a)
  ret float %r
}
define double @i2d_rz(i32 %a) {
  %r = call double @llvm.nvvm.i2d.rz(i32 %a)
  ret double %r
}
define float @ull2f_rp(i64 %a) {
  %r = call float @llvm.nvvm.ull2f.rp(i64 %a)
  ret float %r
}
define float @d2f_rm(double %a) {
  %r = call float @llvm.nvvm.d2f.rm(double %a)
  ret float %r
}
define i32 @d2i_hi(double %a) {
  %r = call i32 @llvm.nvvm.d2i.hi(double %a)
  ret i32 %r
}
define double @lohi_i2d(i32 %a, i32 %b) {
  %r = call double @llvm.nvvm.lohi.i2d(i32 %a, i32 %b)
  ret double %r
}
define i16 @f2h_rn(float %a) {
  %r = call i16 @llvm.nvvm.f2h.rn(float %a)
  ret i16 %r
}
define i32 @mulhi_s(i32 %a, i32 %b) {
  %r = call i32 @llvm.nvvm.mulhi.i(i32 %a, i32 %b)
  ret i32 %r
}
define i64 @mulhi_ull(i64 %a, i64 %b) {
  %r = call i64 @llvm.nvvm.mulhi.ull(i64 %a, i64 %b)
  ret i64 %r
}
define i32 @mul24(i32 %a, i32 %b) {
  %r = call i32 @llvm.nvvm.mul24.i(i32 %a, i32 %b)
  ret i32 %r
}
define i32 @sad_u(i32 %a, i32 %b, i32 %c) {
  %r = call i32 @llvm.nvvm.sad.ui(i32 %a, i32 %b, i32 %c)
  ret i32 %r
}
define i32 @prmt(i32 %a, i32 %b, i32 %c) {
  %r = call i32 @llvm.nvvm.prmt(i32 %a, i32 %b, i32 %c)
  ret i32 %r
}
define i32 @rotate_b32(i32 %a, i32 %s) {
  %r = call i32 @llvm.nvvm.rotate.b32(i32 %a, i32 %s)
  ret i32 %r
}
define i64 @rotate_b64(i64 %a, i32 %s) {
  %r = call i64 @llvm.nvvm.rotate.b64(i64 %a, i32 %s)
  ret i64 %r
}
define i64 @rotate_right_b64(i64 %a, i32 %s) {
  %r = call i64 @llvm.nvvm.rotate.right.b64(i64 %a, i32 %s)
  ret i64 %r
}
define i32 @float_as_int(float %a) {
  %r = call i32 @llvm.nvvm.bitcast.f2i(float %a)
  ret i32 %r
}
define i32 @ctlz64(i64 %a) {
  %c = call i64 @llvm.ctlz.i64(i64 %a, i1 false)
  %r = trunc i64 %c to i32
  ret i32 %r
}
define i64 @cttz64(i64 %a) {
  %r = call i64 @llvm.cttz.i64(i64 %a, i1 false)
  ret i64 %r
}
define i16 @bswap16(i16 %a) {
  %r = call i16 @llvm.bswap.i16(i16 %a)
  ret i16 %r
}
define i64 @bitrev64(i64 %a) {
  %r = call i64 @llvm.bitreverse.i64(i64 %a)
  ret i64 %r
}
define i32 @ssubsat(i32 %a, i32 %b) {
  %r = call i32 @llvm.ssub.sat.i32(i32 %a, i32 %b)
  ret i32 %r
}
define i64 @umin64(i64 %a, i64 %b) {
  %r = call i64 @llvm.umin.i64(i64 %a, i64 %b)
  ret i64 %r
}
define i16 @smax16(i16 %a, i16 %b) {
  %r = call i16 @llvm.smax.i16(i16 %a, i16 %b)
  ret i16 %r
}
define double @fmin64(double %a, double %b) {
  %r = call double @llvm.minnum.f64(double %a, double %b)
  ret double %r
}
define half @hfma(half %a, half %b, half %c) {
  %r = call half @llvm.fma.f16(half %a, half %b, half %c)
  ret half %r
}
define half @hmin(half %a, half %b) {
  %r = call half @llvm.minnum.f16(half %a, half %b)
  ret half %r
}
define half @habs(half %a) {
  %r = call half @llvm.fabs.f16(half %a)
  ret half %r
}
define float @ftrunc(float %a) {
  %r = call float @llvm.trunc.f32(float %a)
  ret float %r
}
define float @ffloor(float %a) {
  %r = call float @llvm.floor.f32(float %a)
  ret float %r
}
define double @frint(double %a) {
  %r = call double @llvm.rint.f64(double %a)
  ret double %r
}
define float @uitofp16(i16 %a) {
  %r = uitofp i16 %a to float
  ret float %r
}
define i16 @fptoui_sat16(float %a) {
  %r = call i16 @llvm.fptoui.sat.i16.f32(float %a)
  ret i16 %r
}
define half @sitofp_h(i32 %a) {
  %r = sitofp i32 %a to half
  ret half %r
}
define i1 @fcmp_ueq_h(half %a, half %b) {
  %r = fcmp ueq half %a, %b
  ret i1 %r
}

declare float @llvm.nvvm.add.rm.f(float, float)
declare float @llvm.nvvm.add.rz.ftz.f(float, float)
declare float @llvm.nvvm.mul.rp.f(float, float)
declare double @llvm.nvvm.fma.rz.d(double, double, double)
declare float @llvm.nvvm.div.rn.f(float, float)
declare float @llvm.nvvm.div.approx.f(float, float)
declare float @llvm.nvvm.rcp.rn.f(float)
declare float @llvm.nvvm.sqrt.rn.f(float)
declare float @llvm.nvvm.fmin.ftz.f(float, float)
declare float @llvm.nvvm.fmax.f(float, float)
declare float @llvm.nvvm.saturate.f(float)
declare i32 @llvm.nvvm.f2i.rz(float)
declare i32 @llvm.nvvm.f2ui.rm(float)
declare i64 @llvm.nvvm.d2ll.rn(double)
declare float @llvm.nvvm.i2f.rz(i32)
declare float @llvm.nvvm.ull2f.rp(i64)
declare double @llvm.nvvm.ll2d.rz(i64)
declare float @llvm.nvvm.ui2f.rz(i32)
declare double @llvm.nvvm.i2d.rz(i32)
declare float @llvm.nvvm.d2f.rm(double)
declare i32 @llvm.nvvm.d2i.hi(double)
declare double @llvm.nvvm.lohi.i2d(i32, i32)
declare i16 @llvm.nvvm.f2h.rn(float)
declare i32 @llvm.nvvm.mulhi.i(i32, i32)
declare i64 @llvm.nvvm.mulhi.ull(i64, i64)
declare i32 @llvm.nvvm.mul24.i(i32, i32)
declare i32 @llvm.nvvm.sad.ui(i32, i32, i32)
declare i32 @llvm.nvvm.prmt(i32, i32, i32)
declare i32 @llvm.nvvm.rotate.b32(i32, i32)
declare i64 @llvm.nvvm.rotate.b64(i64, i32)
declare i64 @llvm.nvvm.rotate.right.b64(i64, i32)
declare i32 @llvm.nvvm.bitcast.f2i(float)
declare i64 @llvm.ctlz.i64(i64, i1)
declare i64 @llvm.cttz.i64(i64, i1)
declare i16 @llvm.bswap.i16(i16)
declare i64 @llvm.bitreverse.i64(i64)
declare i32 @llvm.ssub.sat.i32(i32, i32)
declare i64 @llvm.umin.i64(i64, i64)
declare i16 @llvm.smax.i16(i16, i16)
declare double @llvm.minnum.f64(double, double)
declare half @llvm.fma.f16(half, half, half)
declare half @llvm.minnum.f16(half, half)
declare half @llvm.fabs.f16(half)
declare float @llvm.trunc.f32(float)
declare float @llvm.floor.f32(float)
declare double @llvm.rint.f64(double)
declare i16 @llvm.fptoui.sat.i16.f32(float)
