define i32 @f(i32 %a, i32 %b, i32 %c, i32 %d) {
entry:
  %s = mul i32 %a, %b
  %t = add i32 %s, %c
  %q1 = udiv i32 %t, 7
  %r1 = urem i32 %t, 28
  %u = sub i32 %a, %d
  %q2 = sdiv i32 %u, -5
  %v = xor i32 %b, %c
  %r2 = srem i32 %v, 3
  %q3 = sdiv i32 %d, 8
  %r3 = urem i32 %a, 16
  %w = add i32 %a, %b
  %q4 = udiv i32 %w, 10
  %r4 = urem i32 %w, 10
  %x1 = mul i32 %r1, 3
  %x2 = add i32 %q1, %x1
  %x3 = xor i32 %x2, %q2
  %x4 = add i32 %x3, %r2
  %x5 = sub i32 %x4, %q3
  %x6 = add i32 %x5, %r3
  %x7 = mul i32 %q4, 13
  %x8 = add i32 %x6, %x7
  %x9 = xor i32 %x8, %r4
  %y1 = sdiv i32 %x9, 7
  %y2 = add i32 %y1, %t
  ret i32 %y2
}
