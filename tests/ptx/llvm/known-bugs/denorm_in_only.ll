define float @denorm_in_only(float %x, float %y) #0 {
  %r = fadd float %x, %y
  ret float %r
}
attributes #0 = { "denormal-fp-math-f32"="ieee,preserve-sign" }
