target triple = "nvptx64-nvidia-cuda"
define i32 @umin(i32 %a, i32 %b) { %c = icmp ult i32 %a, %b
  %r = select i1 %c, i32 %a, i32 %b
  ret i32 %r }
define float @fsel(float %a, float %b, float %x, float %y) { %c = fcmp ult float %a, %b
  %r = select i1 %c, float %x, float %y
  ret float %r }
define i1 @funo(double %a, double %b) { %c = fcmp uno double %a, %b
  ret i1 %c }
define i16 @s16(i16 %a, i16 %b) { %c = icmp sge i16 %a, %b
  %r = select i1 %c, i16 %a, i16 7
  ret i16 %r }
define i64 @s64(i64 %a, i64 %b) { %c = icmp sgt i64 %a, %b
  %d = icmp eq i64 %a, 0
  %e = and i1 %c, %d
  %r = select i1 %e, i64 %a, i64 %b
  ret i64 %r }
define void @store(i32* %p, i32 %a, i32 %b) {
entry:
  %c = icmp slt i32 %a, %b
  br i1 %c, label %then, label %done
then:
  store i32 %a, i32* %p
  br label %done
done:
  ret void }
define half @hmin(half %a, half %b) { %c = fcmp olt half %a, %b
  %r = select i1 %c, half %a, half %b
  ret half %r }
define <2 x half> @h2(<2 x half> %a, <2 x half> %b) { %c = fcmp ogt <2 x half> %a, %b
  %r = select <2 x i1> %c, <2 x half> %a, <2 x half> %b
  ret <2 x half> %r }
define float @fmn(float %a, float %b) { %r = call float @llvm.minnum.f32(float %a, float %b)
  ret float %r }
declare float @llvm.minnum.f32(float, float)
