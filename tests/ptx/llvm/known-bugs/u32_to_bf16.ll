define bfloat @u32_to_bf16(i32 %a) {
  %r = uitofp i32 %a to bfloat
  ret bfloat %r
}
