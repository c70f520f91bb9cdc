define i32 @ashr_bfe(i32 %a) {
  %m = and i32 %a, -32768
  %r = ashr exact i32 %m, 15
  ret i32 %r
}

define float @i1_to_float(i1 %a) {
  %r = sitofp i1 %a to float
  ret float %r
}

declare i64 @llvm.fshl.i64(i64, i64, i64)

define i64 @rotl64(i64 %a, i64 %n) {
  %r = call i64 @llvm.fshl.i64(i64 %a, i64 %a, i64 %n)
  ret i64 %r
}

define i1 @f32_to_u1(float %x) {
  %r = fptoui float %x to i1
  ret i1 %r
}

define i1 @f32_to_s1(float %x) {
  %r = fptosi float %x to i1
  ret i1 %r
}

define i32 @sext_shl_top(i16 %x) {
  %s = shl nsw i16 %x, 15
  %e = sext i16 %s to i32
  ret i32 %e
}

define bfloat @u32_to_bf16(i32 %a) {
  %r = uitofp i32 %a to bfloat
  ret bfloat %r
}
