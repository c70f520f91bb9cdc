define float @sitofp_i1_f32(i1 %a) {
  %r = sitofp i1 %a to float
  ret float %r
}
