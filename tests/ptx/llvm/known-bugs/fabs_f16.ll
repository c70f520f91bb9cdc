declare half @llvm.fabs.f16(half)
define half @fabs_f16(half %x) {
  %r = call half @llvm.fabs.f16(half %x)
  ret half %r
}
