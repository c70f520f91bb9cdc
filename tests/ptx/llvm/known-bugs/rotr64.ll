declare i64 @llvm.fshr.i64(i64, i64, i64)

define i64 @rotr64(i64 %a, i64 %n) {
  %r = call i64 @llvm.fshr.i64(i64 %a, i64 %a, i64 %n)
  ret i64 %r
}
