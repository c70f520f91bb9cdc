; llvm/test/CodeGen/NVPTX/i8x2-instructions.ll (LLVM after 22, sm_90, -O0): the IR, and
; in i8x2_upstream.ptx the PTX its CHECK lines give (a <2 x i8> read by ld.param.v2.b8,
; returned by one st.param.b16).
define i16 @test_bitcast_2xi8_i16(<2 x i8> %a) {
  %res = bitcast <2 x i8> %a to i16
  ret i16 %res
}

define <2 x i8> @test_bitcast_i16_2xi8(i16 %a) {
  %res = bitcast i16 %a to <2 x i8>
  ret <2 x i8> %res
}
