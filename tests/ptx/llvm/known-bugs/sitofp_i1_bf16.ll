define bfloat @sitofp_i1_bf16(i1 %a) {
  %r = sitofp i1 %a to bfloat
  ret bfloat %r
}
