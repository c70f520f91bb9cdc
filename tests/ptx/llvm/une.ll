; PTX in une_llc14_O2.ptx: llc-14 -O2 -mcpu=sm_80 une.ll -o une_llc14_O2.ptx
target triple = "nvptx64-nvidia-cuda"

define zeroext i1 @une(float %a, float %b) {
  %r = fcmp une float %a, %b
  ret i1 %r
}

define i32 @add(i32 %a, i8 %b) {
  %c = zext i8 %b to i32
  %r = add i32 %a, %c
  ret i32 %r
}
