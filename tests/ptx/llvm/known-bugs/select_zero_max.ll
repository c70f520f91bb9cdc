define float @select_zero_max(float %x) {
  %c = fcmp olt float %x, 0.0
  %r = select i1 %c, float 0.0, float %x
  ret float %r
}
