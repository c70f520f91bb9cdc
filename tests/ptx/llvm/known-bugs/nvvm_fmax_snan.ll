declare float @llvm.nvvm.fmax.f(float, float)
define float @nvvm_fmax_snan(float %a) {
  %r = call float @llvm.nvvm.fmax.f(float %a, float 0x7FF4000000000000)
  ret float %r
}
