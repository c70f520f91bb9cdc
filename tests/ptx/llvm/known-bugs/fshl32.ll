declare i32 @llvm.fshl.i32(i32, i32, i32)
define i32 @fshl32(i32 %hi, i32 %lo, i32 %n) {
  %r = call i32 @llvm.fshl.i32(i32 %hi, i32 %lo, i32 %n)
  ret i32 %r
}
