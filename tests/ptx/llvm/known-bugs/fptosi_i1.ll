define i1 @fptosi_i1(float %x) {
  %r = fptosi float %x to i1
  ret i1 %r
}
