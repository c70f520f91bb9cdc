; Functions of the kinds the held-out mix holds and the first sources lacked: switches
; lowered to lookup tables (of several widths), loops with a bound from a parameter,
; atomics of every integer kind, half and i8 parameters whose size LLVM 14 and 22 pass
; differently, selects between parameters, constant arrays in .const and .global, early
; returns. UB-free on every input.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@ctab = internal addrspace(4) constant [8 x i32] [i32 1, i32 1, i32 2, i32 3, i32 5, i32 8, i32 13, i32 21], align 4
@gtab = internal addrspace(1) constant [4 x i16] [i16 -7, i16 300, i16 0, i16 9], align 2

define i32 @switch_table8(i32 %a) {
entry:
  switch i32 %a, label %def [ i32 0, label %c0
                              i32 1, label %c1
                              i32 2, label %c2
                              i32 3, label %c3
                              i32 4, label %c4
                              i32 5, label %c5 ]
c0:
  ret i32 7
c1:
  ret i32 200
c2:
  ret i32 13
c3:
  ret i32 255
c4:
  ret i32 1
c5:
  ret i32 99
def:
  ret i32 0
}
define i64 @switch_table64(i32 %a) {
entry:
  switch i32 %a, label %def [ i32 10, label %c0
                              i32 11, label %c1
                              i32 12, label %c2
                              i32 13, label %c3
                              i32 14, label %c4 ]
c0:
  ret i64 1099511627776
c1:
  ret i64 -1
c2:
  ret i64 42
c3:
  ret i64 8589934592
c4:
  ret i64 3
def:
  ret i64 5
}
define i32 @switch_sparse(i32 %a) {
entry:
  switch i32 %a, label %def [ i32 1, label %c0
                              i32 100, label %c1
                              i32 1000, label %c2
                              i32 -5, label %c3 ]
c0:
  ret i32 11
c1:
  ret i32 22
c2:
  ret i32 33
c3:
  ret i32 44
def:
  ret i32 %a
}
define i32 @const_lookup(i32 %i) {
  %m = and i32 %i, 7
  %p = getelementptr [8 x i32], [8 x i32] addrspace(4)* @ctab, i32 0, i32 %m
  %v = load i32, i32 addrspace(4)* %p, align 4
  ret i32 %v
}
define i32 @global_lookup(i32 %i) {
  %m = and i32 %i, 3
  %p = getelementptr [4 x i16], [4 x i16] addrspace(1)* @gtab, i32 0, i32 %m
  %v = load i16, i16 addrspace(1)* %p, align 2
  %w = sext i16 %v to i32
  ret i32 %w
}
define i32 @loop_n(i32 %n) {
entry:
  %z = icmp eq i32 %n, 0
  br i1 %z, label %done, label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s1, %loop ]
  %t = mul i32 %i, 3
  %s1 = add i32 %s, %t
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %n
  br i1 %c, label %loop, label %done
done:
  %r = phi i32 [ 0, %entry ], [ %s1, %loop ]
  ret i32 %r
}
define i32 @loop_small(i32 %n) {
entry:
  %b = and i32 %n, 3
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ 1, %entry ], [ %s1, %loop ]
  %s1 = shl i32 %s, 1
  %i1 = add i32 %i, 1
  %c = icmp ule i32 %i1, %b
  br i1 %c, label %loop, label %done
done:
  ret i32 %s1
}
define void @loop_store(i32* %p, i32 %n) {
entry:
  %m = and i32 %n, 7
  %z = icmp eq i32 %m, 0
  br i1 %z, label %done, label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %q = getelementptr i32, i32* %p, i32 %i
  store i32 %i, i32* %q, align 4
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %m
  br i1 %c, label %loop, label %done
done:
  ret void
}
define i32 @atomic_max(i32 addrspace(1)* %p, i32 %v) {
  %o = atomicrmw max i32 addrspace(1)* %p, i32 %v seq_cst
  ret i32 %o
}
define i32 @atomic_umin(i32* %p, i32 %v) {
  %o = atomicrmw umin i32* %p, i32 %v monotonic
  ret i32 %o
}
define i32 @atomic_xchg(i32* %p, i32 %v) {
  %o = atomicrmw xchg i32* %p, i32 %v seq_cst
  ret i32 %o
}
define i32 @atomic_and_or(i32* %p, i32 %v) {
  %a = atomicrmw and i32* %p, i32 %v seq_cst
  %b = atomicrmw or i32* %p, i32 %a seq_cst
  ret i32 %b
}
define i64 @atomic_add64(i64* %p, i64 %v) {
  %o = atomicrmw add i64* %p, i64 %v seq_cst
  ret i64 %o
}
define i32 @atomic_cas(i32* %p, i32 %c, i32 %v) {
  %r = cmpxchg i32* %p, i32 %c, i32 %v seq_cst seq_cst
  %o = extractvalue { i32, i1 } %r, 0
  ret i32 %o
}
define void @atomic_sub_shared(i32 addrspace(3)* %p, i32 %v) {
  %o = atomicrmw sub i32 addrspace(3)* %p, i32 %v seq_cst
  ret void
}
define half @hmul(half %a, half %b) {
  %r = fmul half %a, %b
  ret half %r
}
define half @hselect(i1 %c, half %a, half %b) {
  %r = select i1 %c, half %a, half %b
  ret half %r
}
define i8 @sel_i8_sum(i8 %a, i8 %b, i1 %c) {
  %s = add i8 %a, %b
  %r = select i1 %c, i8 %s, i8 %b
  ret i8 %r
}
define i16 @sel_i16(i16 %a, i16 %b, i1 %c) {
  %r = select i1 %c, i16 %a, i16 %b
  ret i16 %r
}
define i32 @early_ret(i32* %p, i32 %n) {
entry:
  %z = icmp slt i32 %n, 0
  br i1 %z, label %neg, label %pos
neg:
  ret i32 -1
pos:
  %v = load i32, i32* %p, align 4
  %s = add i32 %v, %n
  store i32 %s, i32* %p, align 4
  ret i32 %s
}
define void @copy3(i32* %d, i32* %s) {
  %a = load i32, i32* %s, align 4
  %p1 = getelementptr i32, i32* %s, i32 1
  %b = load i32, i32* %p1, align 4
  %p2 = getelementptr i32, i32* %s, i32 2
  %c = load i32, i32* %p2, align 4
  store i32 %c, i32* %d, align 4
  %q1 = getelementptr i32, i32* %d, i32 1
  store i32 %b, i32* %q1, align 4
  %q2 = getelementptr i32, i32* %d, i32 2
  store i32 %a, i32* %q2, align 4
  ret void
}
define i32 @clamp_sel(i32 %x, i32 %lo, i32 %hi) {
  %a = icmp slt i32 %x, %lo
  %b = select i1 %a, i32 %lo, i32 %x
  %c = icmp sgt i32 %b, %hi
  %d = select i1 %c, i32 %hi, i32 %b
  ret i32 %d
}
define i64 @bswap64(i64 %x) {
  %r = call i64 @llvm.bswap.i64(i64 %x)
  ret i64 %r
}
define i32 @ctpop_ctlz(i32 %x) {
  %a = call i32 @llvm.ctpop.i32(i32 %x)
  %b = call i32 @llvm.ctlz.i32(i32 %x, i1 false)
  %r = add i32 %a, %b
  ret i32 %r
}
define i32 @umul_hi(i32 %a, i32 %b) {
  %x = zext i32 %a to i64
  %y = zext i32 %b to i64
  %m = mul i64 %x, %y
  %h = lshr i64 %m, 32
  %r = trunc i64 %h to i32
  ret i32 %r
}
declare i64 @llvm.bswap.i64(i64)
declare i32 @llvm.ctpop.i32(i32)
declare i32 @llvm.ctlz.i32(i32, i1)
