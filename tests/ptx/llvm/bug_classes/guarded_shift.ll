; Compare-guarded shifts by an i64 amount: `select (icmp ult n, 64), (shl x, n), 0`. The IR
; is 0 for every n >= 64 (the shift is poison there, but select does not choose it).
; llvm/llvm-project#172431 (LLVM 22) drops the guard since PTX shifts clamp, but a PTX
; shift amount is 32 bits (`cvt.u32.u64`): n = 2^32 + 1 shifts by 1. Fixed by #201165.
; PTX: llc-14 -march=nvptx64 -mcpu=sm_80 -O2 (guarded), llvmlite LLVM 22.1 -O0/-O2.
define i64 @shl_guard(i64 %x, i64 %n) {
  %c = icmp ult i64 %n, 64
  %s = shl i64 %x, %n
  %r = select i1 %c, i64 %s, i64 0
  ret i64 %r
}
define i64 @lshr_guard(i64 %x, i64 %n) {
  %c = icmp ult i64 %n, 64
  %s = lshr i64 %x, %n
  %r = select i1 %c, i64 %s, i64 0
  ret i64 %r
}
define i64 @ashr_guard(i64 %x, i64 %n) {
  %c = icmp ult i64 %n, 64
  %s = ashr i64 %x, %n
  %m = ashr i64 %x, 63
  %r = select i1 %c, i64 %s, i64 %m
  ret i64 %r
}
define i32 @shl_guard32(i32 %x, i64 %n) {
  %c = icmp ult i64 %n, 32
  %t = trunc i64 %n to i32
  %s = shl i32 %x, %t
  %r = select i1 %c, i32 %s, i32 0
  ret i32 %r
}
define i64 @shl_guard_ugt(i64 %x, i64 %n) {
  %c = icmp ugt i64 %n, 63
  %s = shl i64 %x, %n
  %r = select i1 %c, i64 0, i64 %s
  ret i64 %r
}
