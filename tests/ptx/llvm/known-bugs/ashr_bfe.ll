define i32 @ashr_bfe(i32 %a) {
  %m = and i32 %a, -32768
  %r = ashr exact i32 %m, 15
  ret i32 %r
}
