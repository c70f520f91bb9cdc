define float @fneg_nan(float %x) {
  %r = fneg float %x
  ret float %r
}
