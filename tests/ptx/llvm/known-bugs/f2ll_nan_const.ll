declare i64 @llvm.nvvm.f2ll.rz(float)

define i64 @f2ll_nan_const() {
  %r = call i64 @llvm.nvvm.f2ll.rz(float 0x7FF8000000000000)
  ret i64 %r
}
