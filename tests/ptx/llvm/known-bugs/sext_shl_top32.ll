define i64 @sext_shl_top32(i32 %x) {
  %s = shl nsw i32 %x, 31
  %e = sext i32 %s to i64
  ret i64 %e
}
