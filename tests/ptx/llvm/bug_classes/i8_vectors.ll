; <2 x i8> and <4 x i8> parameters and returns: bytes of a `.param .align N .b8 [N]`
; array, which llc-14 reads lane by lane (ld.param.v4.u8) and LLVM 22 as one .b32
; taken apart with prmt (i8x4-instructions.ll). PTX as for guarded_shift.ll.
define <4 x i8> @add4(<4 x i8> %a, <4 x i8> %b) {
  %r = add <4 x i8> %a, %b
  ret <4 x i8> %r
}
define <2 x i8> @add2(<2 x i8> %a, <2 x i8> %b) {
  %r = add <2 x i8> %a, %b
  ret <2 x i8> %r
}
define <4 x i8> @sel4(<4 x i8> %a, <4 x i8> %b) {
  %c = icmp slt <4 x i8> %a, %b
  %r = select <4 x i1> %c, <4 x i8> %a, <4 x i8> %b
  ret <4 x i8> %r
}
define i8 @ext4(<4 x i8> %a) {
  %r = extractelement <4 x i8> %a, i32 2
  ret i8 %r
}
define <2 x i8> @shuf2(<2 x i8> %a, <2 x i8> %b) {
  %r = shufflevector <2 x i8> %a, <2 x i8> %b, <2 x i32> <i32 3, i32 0>
  ret <2 x i8> %r
}
