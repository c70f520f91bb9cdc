define i32 @udiv32_7(i32 %x) {
  %r = udiv i32 %x, 7
  ret i32 %r
}
define i32 @sdiv32_7(i32 %x) {
  %r = sdiv i32 %x, 7
  ret i32 %r
}
define i32 @sdiv32_m5(i32 %x) {
  %r = sdiv i32 %x, -5
  ret i32 %r
}
define i32 @urem32_10(i32 %x) {
  %r = urem i32 %x, 10
  ret i32 %r
}
define i32 @srem32_3(i32 %x) {
  %r = srem i32 %x, 3
  ret i32 %r
}
define i32 @sdiv32_8(i32 %x) {
  %r = sdiv i32 %x, 8
  ret i32 %r
}
define i64 @udiv64_7(i64 %x) {
  %r = udiv i64 %x, 7
  ret i64 %r
}
define i64 @sdiv64_3(i64 %x) {
  %r = sdiv i64 %x, 3
  ret i64 %r
}
define i64 @urem64_10(i64 %x) {
  %r = urem i64 %x, 10
  ret i64 %r
}
define i32 @udiv32_54(i32 %x) {
  %r = udiv i32 %x, 54
  ret i32 %r
}
