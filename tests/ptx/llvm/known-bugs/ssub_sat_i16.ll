declare i16 @llvm.ssub.sat.i16(i16, i16)
define i16 @ssub_sat_i16(i16 %a) {
  %r = call i16 @llvm.ssub.sat.i16(i16 0, i16 %a)
  ret i16 %r
}
