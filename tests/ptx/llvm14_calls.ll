target triple = "nvptx64-nvidia-cuda"
@g = addrspace(1) global i32 5, align 4
@arr = addrspace(1) global [4 x float] [float 1.0, float 2.0, float 3.0, float 4.0], align 4
@sh = external addrspace(3) global [0 x i32], align 16
@cst = addrspace(4) constant [2 x i64] [i64 1, i64 2]

declare float @llvm.minnum.f32(float, float)
declare float @llvm.maxnum.f32(float, float)
declare double @llvm.minnum.f64(double, double)
declare half @llvm.minnum.f16(half, half)
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.umax.i32(i32, i32)
declare i16 @llvm.smax.i16(i16, i16)
declare i64 @llvm.umin.i64(i64, i64)
declare i32 @llvm.abs.i32(i32, i1)
declare float @llvm.fabs.f32(float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @ext(i32)

define i32 @f1(i32 %a, i32 %b) {
  %c = icmp slt i32 %a, %b
  %s = select i1 %c, i32 %a, i32 %b
  %m = call i32 @llvm.smin.i32(i32 %a, i32 %s)
  %u = call i32 @llvm.umax.i32(i32 %m, i32 7)
  %ab = call i32 @llvm.abs.i32(i32 %u, i1 false)
  %r = call i32 @ext(i32 %ab)
  ret i32 %r
}
define float @f2(float %a, float %b) {
  %m = call float @llvm.minnum.f32(float %a, float %b)
  %n = call float @llvm.maxnum.f32(float %m, float 1.0)
  %c = fcmp uno float %n, %a
  %f = call float @llvm.fabs.f32(float %n)
  %s = select i1 %c, float %f, float 0.0
  %ng = fneg float %s
  ret float %ng
}
define double @f3(double %a, double %b) {
  %m = call double @llvm.minnum.f64(double %a, double %b)
  %c = fcmp oge double %m, 2.0
  %s = select i1 %c, double %a, double %m
  ret double %s
}
define half @f4(half %a, half %b) {
  %m = call half @llvm.minnum.f16(half %a, half %b)
  %c = fcmp olt half %m, %b
  %s = select i1 %c, half %a, half %m
  ret half %s
}
define <2 x half> @f5(<2 x half> %a, <2 x half> %b) {
  %c = fcmp olt <2 x half> %a, %b
  %s = select <2 x i1> %c, <2 x half> %a, <2 x half> %b
  ret <2 x half> %s
}
define i16 @f6(i16 %a, i16 %b) {
  %m = call i16 @llvm.smax.i16(i16 %a, i16 %b)
  %x = shl i16 %m, 3
  %y = ashr i16 %x, 1
  ret i16 %y
}
define i64 @f7(i64 %a, i64 %b) {
  %m = call i64 @llvm.umin.i64(i64 %a, i64 %b)
  %c = icmp eq i64 %m, 0
  %z = zext i1 %c to i64
  %q = lshr i64 %m, %z
  ret i64 %q
}
define i8 @f8(i8 %a, i8 %b) {
  %c = icmp ult i8 %a, %b
  %s = select i1 %c, i8 %a, i8 %b
  ret i8 %s
}
define void @k(i32* %p, float* %q, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %loc = alloca [4 x i32], align 4
  %gp = getelementptr [4 x i32], [4 x i32]* %loc, i32 0, i32 %n
  store i32 %t, i32* %gp
  %v = load i32, i32 addrspace(1)* @g
  %sp = getelementptr [0 x i32], [0 x i32] addrspace(3)* @sh, i32 0, i32 %t
  store i32 %v, i32 addrspace(3)* %sp
  %lp = getelementptr [4 x i32], [4 x i32]* %loc, i32 0, i32 1
  %lv = load i32, i32* %lp
  switch i32 %n, label %d [ i32 0, label %a
                            i32 1, label %b
                            i32 2, label %cc
                            i32 3, label %dd ]
a:
  store i32 1, i32* %p
  br label %d
b:
  store i32 %lv, i32* %p
  br label %d
cc:
  %x = call i32 asm "{ .reg .pred p; setp.ne.b32 p, $1, 0; selp.u32 $0, 1, 0, p; }", "=r,r"(i32 %t)
  store i32 %x, i32* %p
  br label %d
dd:
  %f = load float, float* %q
  %c2 = fcmp ole float %f, 3.0
  %sel = select i1 %c2, i32 3, i32 4
  store i32 %sel, i32* %p
  br label %d
d:
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i32*, float*, i32)* @k, !"kernel", i32 1, !"maxntidx", i32 128}
