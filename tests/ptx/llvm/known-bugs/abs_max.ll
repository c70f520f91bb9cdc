declare i32 @llvm.smax.i32(i32, i32)
define i32 @abs_max(i32 %x, i32 %y) {
  %n = sub i32 0, %x
  %a = call i32 @llvm.smax.i32(i32 %x, i32 %n)
  %m = call i32 @llvm.smax.i32(i32 %a, i32 %y)
  ret i32 %m
}
