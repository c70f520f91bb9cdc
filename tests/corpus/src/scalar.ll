; Small self-contained functions of the kinds LLVM's NVPTX CodeGen tests exercise, written
; for ptxsmt's function corpus (scripts/make_function_corpus.py compiles them with llc-14
; and with the LLVM inside llvmlite). Typed pointers (LLVM 14); the script rewrites them
; to `ptr` for the newer LLVM. Every function is free of UB and poison on every input, so
; -O0 and -O2 must agree bit for bit (shift amounts masked, divisors nonzero, fptosi.sat).
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; ---- integer compares and selects --------------------------------------------------------
define i32 @smax32(i32 %a, i32 %b) {
  %c = icmp sgt i32 %a, %b
  %r = select i1 %c, i32 %a, i32 %b
  ret i32 %r
}
define i32 @umin32(i32 %a, i32 %b) {
  %c = icmp ult i32 %a, %b
  %r = select i1 %c, i32 %a, i32 %b
  ret i32 %r
}
define i64 @smin64(i64 %a, i64 %b) {
  %c = icmp slt i64 %a, %b
  %r = select i1 %c, i64 %a, i64 %b
  ret i64 %r
}
define i16 @umax16(i16 %a, i16 %b) {
  %c = icmp ugt i16 %a, %b
  %r = select i1 %c, i16 %a, i16 %b
  ret i16 %r
}
define i32 @clamp32(i32 %v, i32 %lo, i32 %hi) {
  %c1 = icmp slt i32 %v, %lo
  %t = select i1 %c1, i32 %lo, i32 %v
  %c2 = icmp sgt i32 %t, %hi
  %r = select i1 %c2, i32 %hi, i32 %t
  ret i32 %r
}
define i32 @cmp3way(i32 %a, i32 %b) {
  %lt = icmp slt i32 %a, %b
  %gt = icmp sgt i32 %a, %b
  %g = zext i1 %gt to i32
  %r = select i1 %lt, i32 -1, i32 %g
  ret i32 %r
}
define i32 @in_range(i32 %x) {
  %a = icmp uge i32 %x, 10
  %b = icmp ule i32 %x, 20
  %c = and i1 %a, %b
  %r = zext i1 %c to i32
  ret i32 %r
}
define i32 @eq_or_ne(i32 %a, i32 %b, i32 %c) {
  %x = icmp eq i32 %a, %b
  %y = icmp ne i32 %b, %c
  %z = xor i1 %x, %y
  %r = select i1 %z, i32 7, i32 3
  ret i32 %r
}
define i8 @sel_i8(i8 %a, i8 %b, i1 %p) {
  %r = select i1 %p, i8 %a, i8 %b
  ret i8 %r
}
define i32 @abs32(i32 %a) {
  %r = call i32 @llvm.abs.i32(i32 %a, i1 false)
  ret i32 %r
}
define i64 @abs64_sel(i64 %a) {
  %n = sub i64 0, %a
  %c = icmp slt i64 %a, 0
  %r = select i1 %c, i64 %n, i64 %a
  ret i64 %r
}
define i32 @smin_intr(i32 %a, i32 %b) {
  %r = call i32 @llvm.smin.i32(i32 %a, i32 %b)
  ret i32 %r
}
define i32 @umax_intr(i32 %a, i32 %b) {
  %r = call i32 @llvm.umax.i32(i32 %a, i32 %b)
  ret i32 %r
}
define i32 @sign32(i32 %a) {
  %p = icmp sgt i32 %a, 0
  %n = icmp slt i32 %a, 0
  %pp = zext i1 %p to i32
  %nn = zext i1 %n to i32
  %r = sub i32 %pp, %nn
  ret i32 %r
}

; ---- shifts, rotates, bits ----------------------------------------------------------------
define i32 @shl_masked(i32 %a, i32 %s) {
  %m = and i32 %s, 31
  %r = shl i32 %a, %m
  ret i32 %r
}
define i32 @ashr_masked(i32 %a, i32 %s) {
  %m = and i32 %s, 31
  %r = ashr i32 %a, %m
  ret i32 %r
}
define i64 @lshr64_masked(i64 %a, i64 %s) {
  %m = and i64 %s, 63
  %r = lshr i64 %a, %m
  ret i64 %r
}
define i32 @rotl32_const(i32 %a) {
  %l = shl i32 %a, 7
  %h = lshr i32 %a, 25
  %r = or i32 %l, %h
  ret i32 %r
}
define i32 @rotl32_var(i32 %a, i32 %s) {
  %r = call i32 @llvm.fshl.i32(i32 %a, i32 %a, i32 %s)
  ret i32 %r
}
define i32 @rotr32_var(i32 %a, i32 %s) {
  %r = call i32 @llvm.fshr.i32(i32 %a, i32 %a, i32 %s)
  ret i32 %r
}
define i64 @rotl64_const(i64 %a) {
  %r = call i64 @llvm.fshl.i64(i64 %a, i64 %a, i64 13)
  ret i64 %r
}
define i64 @rotl64_var(i64 %a, i64 %s) {
  %r = call i64 @llvm.fshl.i64(i64 %a, i64 %a, i64 %s)
  ret i64 %r
}
define i64 @rotr64_var(i64 %a, i64 %s) {
  %r = call i64 @llvm.fshr.i64(i64 %a, i64 %a, i64 %s)
  ret i64 %r
}
define i32 @funnel32(i32 %a, i32 %b, i32 %s) {
  %r = call i32 @llvm.fshl.i32(i32 %a, i32 %b, i32 %s)
  ret i32 %r
}
define i32 @popc32(i32 %a) {
  %r = call i32 @llvm.ctpop.i32(i32 %a)
  ret i32 %r
}
define i32 @clz32(i32 %a) {
  %r = call i32 @llvm.ctlz.i32(i32 %a, i1 false)
  ret i32 %r
}
define i32 @bswap32(i32 %a) {
  %r = call i32 @llvm.bswap.i32(i32 %a)
  ret i32 %r
}
define i32 @brev32(i32 %a) {
  %r = call i32 @llvm.bitreverse.i32(i32 %a)
  ret i32 %r
}
define i32 @bfe_u(i32 %a) {
  %s = lshr i32 %a, 8
  %r = and i32 %s, 4095
  ret i32 %r
}
define i32 @bfe_s(i32 %a) {
  %s = shl i32 %a, 12
  %r = ashr i32 %s, 20
  ret i32 %r
}
define i32 @bits_merge(i32 %a, i32 %b) {
  %x = and i32 %a, -256
  %y = and i32 %b, 255
  %r = or i32 %x, %y
  ret i32 %r
}

; ---- arithmetic -----------------------------------------------------------------------------
define i32 @udiv_by2(i32 %a) {
  %r = udiv i32 %a, 2
  ret i32 %r
}
define i32 @udiv_by7(i32 %a) {
  %r = udiv i32 %a, 7
  ret i32 %r
}
define i32 @sdiv_by4(i32 %a) {
  %r = sdiv i32 %a, 4
  ret i32 %r
}
define i32 @srem_by3(i32 %a) {
  %r = srem i32 %a, 3
  ret i32 %r
}
define i32 @urem_by16(i32 %a) {
  %r = urem i32 %a, 16
  ret i32 %r
}
define i32 @udiv_var(i32 %a, i32 %b) {
  %d = or i32 %b, 1
  %r = udiv i32 %a, %d
  ret i32 %r
}
define i32 @mul_by_9(i32 %a) {
  %r = mul i32 %a, 9
  ret i32 %r
}
define i32 @mad32(i32 %a, i32 %b, i32 %c) {
  %m = mul i32 %a, %b
  %r = add i32 %m, %c
  ret i32 %r
}
define i64 @mul_wide_s(i32 %a, i32 %b) {
  %x = sext i32 %a to i64
  %y = sext i32 %b to i64
  %r = mul i64 %x, %y
  ret i64 %r
}
define i32 @mulhi_u(i32 %a, i32 %b) {
  %x = zext i32 %a to i64
  %y = zext i32 %b to i64
  %m = mul i64 %x, %y
  %h = lshr i64 %m, 32
  %r = trunc i64 %h to i32
  ret i32 %r
}
define i64 @add_sub64(i64 %a, i64 %b, i64 %c) {
  %s = add i64 %a, %b
  %r = sub i64 %s, %c
  ret i64 %r
}
define i32 @reassoc(i32 %a) {
  %x = add i32 %a, 3
  %y = mul i32 %x, 4
  %r = add i32 %y, 5
  ret i32 %r
}
define i32 @uaddsat(i32 %a, i32 %b) {
  %r = call i32 @llvm.uadd.sat.i32(i32 %a, i32 %b)
  ret i32 %r
}
define i16 @add16(i16 %a, i16 %b) {
  %r = add i16 %a, %b
  ret i16 %r
}
define i8 @mul8(i8 %a, i8 %b) {
  %r = mul i8 %a, %b
  ret i8 %r
}

; ---- conversions ----------------------------------------------------------------------------
define i64 @sext32(i32 %a) {
  %r = sext i32 %a to i64
  ret i64 %r
}
define i32 @zext8(i8 %a) {
  %r = zext i8 %a to i32
  ret i32 %r
}
define i16 @trunc32(i32 %a) {
  %r = trunc i32 %a to i16
  ret i16 %r
}
define i32 @sext16_add(i16 %a, i16 %b) {
  %x = sext i16 %a to i32
  %y = sext i16 %b to i32
  %r = add i32 %x, %y
  ret i32 %r
}
define float @sitofp32(i32 %a) {
  %r = sitofp i32 %a to float
  ret float %r
}
define double @uitofp64(i64 %a) {
  %r = uitofp i64 %a to double
  ret double %r
}
define i32 @fptosi_sat(float %a) {
  %r = call i32 @llvm.fptosi.sat.i32.f32(float %a)
  ret i32 %r
}
define float @fptrunc64(double %a) {
  %r = fptrunc double %a to float
  ret float %r
}
define double @fpext32(float %a) {
  %r = fpext float %a to double
  ret double %r
}
define half @f32_to_f16(float %a) {
  %r = fptrunc float %a to half
  ret half %r
}
define float @f16_to_f32(half %a) {
  %r = fpext half %a to float
  ret float %r
}
define i32 @float_bits(float %a) {
  %r = bitcast float %a to i32
  ret i32 %r
}

; ---- floating point -------------------------------------------------------------------------
define float @fadd32(float %a, float %b) {
  %r = fadd float %a, %b
  ret float %r
}
define double @fmul64(double %a, double %b) {
  %r = fmul double %a, %b
  ret double %r
}
define float @fmuladd_contract(float %a, float %b, float %c) {
  %m = fmul float %a, %b
  %r = fadd float %m, %c
  ret float %r
}
define float @fma32(float %a, float %b, float %c) {
  %r = call float @llvm.fma.f32(float %a, float %b, float %c)
  ret float %r
}
define float @fminnum(float %a, float %b) {
  %r = call float @llvm.minnum.f32(float %a, float %b)
  ret float %r
}
define float @fmaxnum(float %a, float %b) {
  %r = call float @llvm.maxnum.f32(float %a, float %b)
  ret float %r
}
define float @fmin_sel(float %a, float %b) {
  %c = fcmp olt float %a, %b
  %r = select i1 %c, float %a, float %b
  ret float %r
}
define float @fabs32(float %a) {
  %r = call float @llvm.fabs.f32(float %a)
  ret float %r
}
define float @fneg32(float %a) {
  %r = fneg float %a
  ret float %r
}
define float @copysign32(float %a, float %b) {
  %r = call float @llvm.copysign.f32(float %a, float %b)
  ret float %r
}
define i32 @fcmp_une(float %a, float %b) {
  %c = fcmp une float %a, %b
  %r = zext i1 %c to i32
  ret i32 %r
}
define i32 @fcmp_ord(double %a, double %b) {
  %c = fcmp ord double %a, %b
  %r = zext i1 %c to i32
  ret i32 %r
}
define i32 @fcmp_ult(float %a, float %b) {
  %c = fcmp ult float %a, %b
  %r = select i1 %c, i32 11, i32 22
  ret i32 %r
}
define i32 @isnan32(float %a) {
  %c = fcmp uno float %a, 0.0
  %r = zext i1 %c to i32
  ret i32 %r
}
define half @hadd(half %a, half %b) {
  %r = fadd half %a, %b
  ret half %r
}
define i32 @hcmp_olt(half %a, half %b) {
  %c = fcmp olt half %a, %b
  %r = zext i1 %c to i32
  ret i32 %r
}
define half @hmax_sel(half %a, half %b) {
  %c = fcmp ogt half %a, %b
  %r = select i1 %c, half %a, half %b
  ret half %r
}
define half @hneg(half %a) {
  %r = fneg half %a
  ret half %r
}
define float @fdiv32(float %a, float %b) {
  %r = fdiv float %a, %b
  ret float %r
}
define double @fsqrt64(double %a) {
  %r = call double @llvm.sqrt.f64(double %a)
  ret double %r
}

; ---- branches, phis, switch -----------------------------------------------------------------
define i32 @branch_max(i32 %a, i32 %b) {
entry:
  %c = icmp sgt i32 %a, %b
  br i1 %c, label %t, label %f
t:
  br label %j
f:
  br label %j
j:
  %r = phi i32 [ %a, %t ], [ %b, %f ]
  ret i32 %r
}
define i32 @branch_diamond(i32 %a, i32 %b) {
entry:
  %c = icmp ult i32 %a, 100
  br i1 %c, label %small, label %big
small:
  %x = add i32 %a, %b
  br label %j
big:
  %y = mul i32 %a, 3
  br label %j
j:
  %r = phi i32 [ %x, %small ], [ %y, %big ]
  %z = xor i32 %r, 5
  ret i32 %z
}
define i32 @early_return(i32 %a) {
entry:
  %c = icmp eq i32 %a, 0
  br i1 %c, label %zero, label %nz
zero:
  ret i32 42
nz:
  %r = shl i32 %a, 1
  ret i32 %r
}
define i32 @nested_if(i32 %a, i32 %b) {
entry:
  %c1 = icmp sgt i32 %a, 0
  br i1 %c1, label %pos, label %done
pos:
  %c2 = icmp sgt i32 %b, 0
  br i1 %c2, label %both, label %done
both:
  %s = add i32 %a, %b
  br label %done
done:
  %r = phi i32 [ 0, %entry ], [ 1, %pos ], [ %s, %both ]
  ret i32 %r
}
define i32 @switch_dense(i32 %a) {
entry:
  switch i32 %a, label %def [ i32 0, label %c0
                              i32 1, label %c1
                              i32 2, label %c2
                              i32 3, label %c3
                              i32 4, label %c4 ]
c0:
  ret i32 10
c1:
  ret i32 31
c2:
  ret i32 52
c3:
  ret i32 3
c4:
  ret i32 94
def:
  ret i32 0
}
define i32 @switch_sparse(i32 %a) {
entry:
  switch i32 %a, label %def [ i32 7, label %c0
                              i32 100, label %c1
                              i32 -5, label %c2 ]
c0:
  ret i32 1
c1:
  ret i32 2
c2:
  ret i32 3
def:
  ret i32 4
}
define i32 @switch_compute(i32 %a, i32 %b) {
entry:
  %k = and i32 %a, 7
  switch i32 %k, label %def [ i32 0, label %c0
                              i32 1, label %c1
                              i32 2, label %c2
                              i32 3, label %c3
                              i32 5, label %c5 ]
c0:
  %x0 = add i32 %b, 1
  br label %j
c1:
  %x1 = mul i32 %b, 3
  br label %j
c2:
  %x2 = xor i32 %b, 255
  br label %j
c3:
  %x3 = lshr i32 %b, 3
  br label %j
c5:
  %x5 = sub i32 0, %b
  br label %j
def:
  br label %j
j:
  %r = phi i32 [ %x0, %c0 ], [ %x1, %c1 ], [ %x2, %c2 ], [ %x3, %c3 ], [ %x5, %c5 ], [ %b, %def ]
  ret i32 %r
}
define i32 @loop_sum4(i32 %a) {
entry:
  br label %l
l:
  %i = phi i32 [ 0, %entry ], [ %i1, %l ]
  %s = phi i32 [ 0, %entry ], [ %s1, %l ]
  %t = add i32 %a, %i
  %s1 = add i32 %s, %t
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, 4
  br i1 %c, label %l, label %e
e:
  ret i32 %s1
}

; ---- memory through pointer parameters --------------------------------------------------
define void @store_sum(i32* %p, i32 %a, i32 %b) {
  %s = add i32 %a, %b
  %q = getelementptr i32, i32* %p, i64 3
  store i32 %s, i32* %q
  ret void
}
define i32 @load_add(i32* %p) {
  %a = load i32, i32* %p
  %q = getelementptr i32, i32* %p, i64 1
  %b = load i32, i32* %q
  %r = add i32 %a, %b
  ret i32 %r
}
define i32 @load_sext8(i8* %p) {
  %a = load i8, i8* %p
  %r = sext i8 %a to i32
  ret i32 %r
}
define i32 @load_zext16(i16* %p, i64 %i) {
  %q = getelementptr i16, i16* %p, i64 %i
  %a = load i16, i16* %q
  %r = zext i16 %a to i32
  ret i32 %r
}
define void @copy_swap(i32* %p, i32* %o) {
  %a = load i32, i32* %p
  %q = getelementptr i32, i32* %p, i64 1
  %b = load i32, i32* %q
  store i32 %b, i32* %o
  %o1 = getelementptr i32, i32* %o, i64 1
  store i32 %a, i32* %o1
  ret void
}
define void @cond_store(i32* %p, i32 %a) {
entry:
  %c = icmp sgt i32 %a, 0
  br i1 %c, label %s, label %e
s:
  store i32 %a, i32* %p
  br label %e
e:
  ret void
}
define void @store_max_f(float* %p, float %a, float %b) {
  %r = call float @llvm.maxnum.f32(float %a, float %b)
  store float %r, float* %p
  ret void
}
define void @store_i8s(i8* %p, i32 %a) {
  %t = trunc i32 %a to i8
  store i8 %t, i8* %p
  %s = lshr i32 %a, 8
  %u = trunc i32 %s to i8
  %q = getelementptr i8, i8* %p, i64 1
  store i8 %u, i8* %q
  ret void
}
define i64 @load64_mix(i64* %p, i32 %k) {
  %i = and i32 %k, 3
  %j = zext i32 %i to i64
  %q = getelementptr i64, i64* %p, i64 %j
  %a = load i64, i64* %q
  %r = xor i64 %a, -1
  ret i64 %r
}
define void @kernel_add(i32* %a, i32* %b, i32* %o) {
  %x = load i32, i32* %a
  %y = load i32, i32* %b
  %s = add i32 %x, %y
  store i32 %s, i32* %o
  ret void
}
define void @kernel_tid(i32* %o, i32 %v) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %q = getelementptr i32, i32* %o, i64 %i
  %w = add i32 %v, %t
  store i32 %w, i32* %q
  ret void
}

; ---- calls --------------------------------------------------------------------------------
define internal i32 @helper_sq(i32 %a) noinline {
  %r = mul i32 %a, %a
  ret i32 %r
}
define i32 @call_helper(i32 %a, i32 %b) {
  %x = call i32 @helper_sq(i32 %a)
  %r = add i32 %x, %b
  ret i32 %r
}
define i32 @call_twice(i32 %a) {
  %x = call i32 @helper_sq(i32 %a)
  %y = call i32 @helper_sq(i32 %x)
  ret i32 %y
}

declare i32 @llvm.abs.i32(i32, i1)
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.umax.i32(i32, i32)
declare i32 @llvm.fshl.i32(i32, i32, i32)
declare i32 @llvm.fshr.i32(i32, i32, i32)
declare i64 @llvm.fshl.i64(i64, i64, i64)
declare i64 @llvm.fshr.i64(i64, i64, i64)
declare i32 @llvm.ctpop.i32(i32)
declare i32 @llvm.ctlz.i32(i32, i1)
declare i32 @llvm.bswap.i32(i32)
declare i32 @llvm.bitreverse.i32(i32)
declare i32 @llvm.uadd.sat.i32(i32, i32)
declare i32 @llvm.fptosi.sat.i32.f32(float)
declare float @llvm.fma.f32(float, float, float)
declare float @llvm.minnum.f32(float, float)
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.fabs.f32(float)
declare float @llvm.copysign.f32(float, float)
declare double @llvm.sqrt.f64(double)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
