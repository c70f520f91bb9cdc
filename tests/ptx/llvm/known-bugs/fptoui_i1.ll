define i1 @fptoui_i1(float %x) {
  %r = fptoui float %x to i1
  ret i1 %r
}
