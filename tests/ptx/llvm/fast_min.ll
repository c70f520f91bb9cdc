; PTX in fast_min_llc14_O2.ptx: llc-14 -march=nvptx64 -mcpu=sm_80 -O2 fast_min.ll
; (min.f32: right only because nsz makes the sign of min(-0.0, +0.0) insignificant)
target triple = "nvptx64-nvidia-cuda"

define float @f(float %a, float %b) {
  %c = fcmp fast olt float %a, %b
  %r = select fast i1 %c, float %a, float %b
  ret float %r
}
