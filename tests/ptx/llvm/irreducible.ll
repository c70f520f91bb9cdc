; a cycle entered at two blocks (l and m): tv and equiv refuse it
define i32 @loop(i32 %n) {
entry:
  %c0 = icmp ult i32 %n, 5
  br i1 %c0, label %l, label %m
l:
  %i = phi i32 [ 0, %entry ], [ %j, %m ]
  %k = add i32 %i, 1
  br label %m
m:
  %j = phi i32 [ %n, %entry ], [ %k, %l ]
  %c = icmp ult i32 %j, 100
  br i1 %c, label %l, label %e
e:
  ret i32 %j
}
