declare float @llvm.fabs.f32(float)
define float @fabs_nan(float %x) {
  %r = call float @llvm.fabs.f32(float %x)
  ret float %r
}
