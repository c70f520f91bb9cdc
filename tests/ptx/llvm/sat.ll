; PTX in sat_llc14_O2.ptx: llc-14 -march=nvptx64 -mcpu=sm_80 -O2 sat.ll (-O0 differs only in load order)
target triple = "nvptx64-nvidia-cuda"
declare i8 @llvm.sadd.sat.i8(i8, i8)
define i8 @sadd_i8(i8 %a, i8 %b) {
  %r = call i8 @llvm.sadd.sat.i8(i8 %a, i8 %b)
  ret i8 %r
}
declare i16 @llvm.sadd.sat.i16(i16, i16)
define i16 @sadd_i16(i16 %a, i16 %b) {
  %r = call i16 @llvm.sadd.sat.i16(i16 %a, i16 %b)
  ret i16 %r
}
declare i32 @llvm.sadd.sat.i32(i32, i32)
define i32 @sadd_i32(i32 %a, i32 %b) {
  %r = call i32 @llvm.sadd.sat.i32(i32 %a, i32 %b)
  ret i32 %r
}
declare i64 @llvm.sadd.sat.i64(i64, i64)
define i64 @sadd_i64(i64 %a, i64 %b) {
  %r = call i64 @llvm.sadd.sat.i64(i64 %a, i64 %b)
  ret i64 %r
}
declare <2 x i16> @llvm.sadd.sat.v2i16(<2 x i16>, <2 x i16>)
define <2 x i16> @sadd_v2i16(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.sadd.sat.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}
declare i8 @llvm.uadd.sat.i8(i8, i8)
define i8 @uadd_i8(i8 %a, i8 %b) {
  %r = call i8 @llvm.uadd.sat.i8(i8 %a, i8 %b)
  ret i8 %r
}
declare i16 @llvm.uadd.sat.i16(i16, i16)
define i16 @uadd_i16(i16 %a, i16 %b) {
  %r = call i16 @llvm.uadd.sat.i16(i16 %a, i16 %b)
  ret i16 %r
}
declare i32 @llvm.uadd.sat.i32(i32, i32)
define i32 @uadd_i32(i32 %a, i32 %b) {
  %r = call i32 @llvm.uadd.sat.i32(i32 %a, i32 %b)
  ret i32 %r
}
declare i64 @llvm.uadd.sat.i64(i64, i64)
define i64 @uadd_i64(i64 %a, i64 %b) {
  %r = call i64 @llvm.uadd.sat.i64(i64 %a, i64 %b)
  ret i64 %r
}
declare <2 x i16> @llvm.uadd.sat.v2i16(<2 x i16>, <2 x i16>)
define <2 x i16> @uadd_v2i16(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.uadd.sat.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}
declare i8 @llvm.ssub.sat.i8(i8, i8)
define i8 @ssub_i8(i8 %a, i8 %b) {
  %r = call i8 @llvm.ssub.sat.i8(i8 %a, i8 %b)
  ret i8 %r
}
declare i16 @llvm.ssub.sat.i16(i16, i16)
define i16 @ssub_i16(i16 %a, i16 %b) {
  %r = call i16 @llvm.ssub.sat.i16(i16 %a, i16 %b)
  ret i16 %r
}
declare i32 @llvm.ssub.sat.i32(i32, i32)
define i32 @ssub_i32(i32 %a, i32 %b) {
  %r = call i32 @llvm.ssub.sat.i32(i32 %a, i32 %b)
  ret i32 %r
}
declare i64 @llvm.ssub.sat.i64(i64, i64)
define i64 @ssub_i64(i64 %a, i64 %b) {
  %r = call i64 @llvm.ssub.sat.i64(i64 %a, i64 %b)
  ret i64 %r
}
declare <2 x i16> @llvm.ssub.sat.v2i16(<2 x i16>, <2 x i16>)
define <2 x i16> @ssub_v2i16(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.ssub.sat.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}
declare i8 @llvm.usub.sat.i8(i8, i8)
define i8 @usub_i8(i8 %a, i8 %b) {
  %r = call i8 @llvm.usub.sat.i8(i8 %a, i8 %b)
  ret i8 %r
}
declare i16 @llvm.usub.sat.i16(i16, i16)
define i16 @usub_i16(i16 %a, i16 %b) {
  %r = call i16 @llvm.usub.sat.i16(i16 %a, i16 %b)
  ret i16 %r
}
declare i32 @llvm.usub.sat.i32(i32, i32)
define i32 @usub_i32(i32 %a, i32 %b) {
  %r = call i32 @llvm.usub.sat.i32(i32 %a, i32 %b)
  ret i32 %r
}
declare i64 @llvm.usub.sat.i64(i64, i64)
define i64 @usub_i64(i64 %a, i64 %b) {
  %r = call i64 @llvm.usub.sat.i64(i64 %a, i64 %b)
  ret i64 %r
}
declare <2 x i16> @llvm.usub.sat.v2i16(<2 x i16>, <2 x i16>)
define <2 x i16> @usub_v2i16(<2 x i16> %a, <2 x i16> %b) {
  %r = call <2 x i16> @llvm.usub.sat.v2i16(<2 x i16> %a, <2 x i16> %b)
  ret <2 x i16> %r
}
