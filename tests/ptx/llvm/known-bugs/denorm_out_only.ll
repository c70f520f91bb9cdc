define float @denorm_out_only(float %x, float %y) #0 {
  %r = fadd float %x, %y
  ret float %r
}
attributes #0 = { "denormal-fp-math-f32"="preserve-sign,ieee" }
