; Functions whose lowering touches the calling convention and the state spaces: aggregate
; parameters and returns (.b8 arrays at offsets), vectors, i1, local allocas, shared and
; constant globals, atomics, an indirect call. Kept apart from scalar.ll so a construct one
; LLVM cannot compile costs only this file's build. UB-free on every input.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@sh = addrspace(3) global [4 x i32] undef, align 4  ; visible: -O2 may not drop its stores
@tbl = internal addrspace(1) constant [4 x i32] [i32 3, i32 14, i32 15, i32 92], align 4

define i32 @agg_param([2 x i32] %a) {
  %x = extractvalue [2 x i32] %a, 0
  %y = extractvalue [2 x i32] %a, 1
  %r = sub i32 %x, %y
  ret i32 %r
}
define { i32, i32 } @pair_ret(i32 %a, i32 %b) {
  %s = add i32 %a, %b
  %d = sub i32 %a, %b
  %p = insertvalue { i32, i32 } undef, i32 %s, 0
  %q = insertvalue { i32, i32 } %p, i32 %d, 1
  ret { i32, i32 } %q
}
define { i16, i64 } @mixed_ret(i16 %a, i64 %b) {
  %w = zext i16 %a to i64
  %s = add i64 %w, %b
  %p = insertvalue { i16, i64 } undef, i16 %a, 0
  %q = insertvalue { i16, i64 } %p, i64 %s, 1
  ret { i16, i64 } %q
}
define <2 x half> @h2add(<2 x half> %a, <2 x half> %b) {
  %r = fadd <2 x half> %a, %b
  ret <2 x half> %r
}
define <2 x i16> @v2i16_add(<2 x i16> %a, <2 x i16> %b) {
  %r = add <2 x i16> %a, %b
  ret <2 x i16> %r
}
define <4 x i8> @v4i8_xor(<4 x i8> %a) {
  %r = xor <4 x i8> %a, <i8 1, i8 2, i8 3, i8 4>
  ret <4 x i8> %r
}
define float @v2f32_sum(<2 x float> %a) {
  %x = extractelement <2 x float> %a, i32 0
  %y = extractelement <2 x float> %a, i32 1
  %r = fadd float %x, %y
  ret float %r
}
define zeroext i1 @ret_bool(i32 %a) {
  %r = icmp ult i32 %a, 17
  ret i1 %r
}
define i32 @bool_param(i1 zeroext %p, i32 %a, i32 %b) {
  %r = select i1 %p, i32 %a, i32 %b
  ret i32 %r
}
define signext i8 @ret_sext8(i32 %a) {
  %t = trunc i32 %a to i8
  ret i8 %t
}
define i32 @local_array(i32 %a, i32 %b, i32 %k) {
  %arr = alloca [4 x i32], align 4
  %p0 = getelementptr [4 x i32], [4 x i32]* %arr, i64 0, i64 0
  %p1 = getelementptr [4 x i32], [4 x i32]* %arr, i64 0, i64 1
  %p2 = getelementptr [4 x i32], [4 x i32]* %arr, i64 0, i64 2
  %p3 = getelementptr [4 x i32], [4 x i32]* %arr, i64 0, i64 3
  store i32 %a, i32* %p0
  store i32 %b, i32* %p1
  %c = add i32 %a, %b
  store i32 %c, i32* %p2
  store i32 7, i32* %p3
  %i = and i32 %k, 3
  %j = zext i32 %i to i64
  %q = getelementptr [4 x i32], [4 x i32]* %arr, i64 0, i64 %j
  %r = load i32, i32* %q
  ret i32 %r
}
define i32 @local_scalar(i32 %a) {
  %v = alloca i32, align 4
  store i32 %a, i32* %v
  %x = load i32, i32* %v
  %r = mul i32 %x, 5
  ret i32 %r
}
define i32 @shared_roundtrip(i32 %a, i32 %b) {
  %p0 = getelementptr [4 x i32], [4 x i32] addrspace(3)* @sh, i64 0, i64 0
  %p1 = getelementptr [4 x i32], [4 x i32] addrspace(3)* @sh, i64 0, i64 1
  store i32 %a, i32 addrspace(3)* %p0
  store i32 %b, i32 addrspace(3)* %p1
  %x = load i32, i32 addrspace(3)* %p0
  %y = load i32, i32 addrspace(3)* %p1
  %r = xor i32 %x, %y
  ret i32 %r
}
define void @shared_store(i32 %a) {
  %p = getelementptr [4 x i32], [4 x i32] addrspace(3)* @sh, i64 0, i64 2
  %b = shl i32 %a, 1
  store i32 %b, i32 addrspace(3)* %p
  ret void
}
define i32 @const_table(i32 %k) {
  %i = and i32 %k, 3
  %j = zext i32 %i to i64
  %p = getelementptr [4 x i32], [4 x i32] addrspace(1)* @tbl, i64 0, i64 %j
  %r = load i32, i32 addrspace(1)* %p
  ret i32 %r
}
define void @global_space(i32 addrspace(1)* %p, i32 %a) {
  %q = getelementptr i32, i32 addrspace(1)* %p, i64 2
  %x = load i32, i32 addrspace(1)* %q
  %s = add i32 %x, %a
  store i32 %s, i32 addrspace(1)* %p
  ret void
}
define i32 @generic_cast(i32 addrspace(1)* %p) {
  %g = addrspacecast i32 addrspace(1)* %p to i32*
  %x = load i32, i32* %g
  %r = add i32 %x, 1
  ret i32 %r
}
define i32 @atomic_add(i32* %p, i32 %a) {
  %old = atomicrmw add i32* %p, i32 %a seq_cst
  ret i32 %old
}
define i32 @indirect_call(i32 (i32)* %f, i32 %a) {
  %r = call i32 %f(i32 %a)
  ret i32 %r
}
define i32 @sreg_mix() {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %m = mul i32 %c, %n
  %r = add i32 %m, %t
  ret i32 %r
}
define i32 @select_chain_i1(i32 %a, i32 %b, i32 %c) {
  %x = icmp sgt i32 %a, %b
  %y = icmp sgt i32 %b, %c
  %z = and i1 %x, %y
  %w = or i1 %z, %x
  %r = select i1 %w, i32 %a, i32 %c
  ret i32 %r
}
define i64 @loop_unrolled8(i64 %a) {
entry:
  br label %l
l:
  %i = phi i32 [ 0, %entry ], [ %i1, %l ]
  %s = phi i64 [ %a, %entry ], [ %s1, %l ]
  %t = shl i64 %s, 1
  %s1 = xor i64 %t, %s
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, 3
  br i1 %c, label %l, label %e
e:
  ret i64 %s1
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
