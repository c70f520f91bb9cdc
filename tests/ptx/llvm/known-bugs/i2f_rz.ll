declare float @llvm.nvvm.i2f.rz(i32)
define float @i2f_rz(i32 %a) {
  %r = call float @llvm.nvvm.i2f.rz(i32 %a)
  ret float %r
}
