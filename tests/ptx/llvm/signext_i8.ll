; PTX in signext_i8_llc14_O2.ptx: llc-14 -O2 -mcpu=sm_80 signext_i8.ll -o signext_i8_llc14_O2.ptx
; signext_i8_wide.ptx: written by hand, a return and a parameter wider than 32 bits
; (what the NVPTX convention extends a narrow integer to: bits above are promised by
; neither side)
target triple = "nvptx64-nvidia-cuda"

define signext i8 @neg8(i8 %a) {
  %r = sub i8 0, %a
  ret i8 %r
}

define i32 @sign8(i8 signext %a) {
  %s = ashr i8 %a, 7
  %w = sext i8 %s to i32
  ret i32 %w
}
