define i64 @f(i64 %a, i64 %b, i64 %c, i64 %d) {
entry:
  %s = mul i64 %a, %b
  %t = add i64 %s, %c
  %q1 = udiv i64 %t, 7
  %r1 = urem i64 %t, 10
  %u = sub i64 %a, %d
  %q2 = sdiv i64 %u, 3
  %r2 = srem i64 %u, 3
  %q3 = sdiv i64 %d, 16
  %x1 = mul i64 %r1, 5
  %x2 = add i64 %q1, %x1
  %x3 = xor i64 %x2, %q2
  %x4 = add i64 %x3, %r2
  %x5 = sub i64 %x4, %q3
  %x6 = mul i64 %x5, %a
  %x7 = add i64 %x6, %q1
  ret i64 %x7
}
