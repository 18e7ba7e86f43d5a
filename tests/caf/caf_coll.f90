! caf_coll.f90 - collective subroutines through libcaf_telemem: co_sum,
! co_min, co_max of every integer, real and complex kind, on strided
! arrays and with result_image; co_min/co_max of character; co_broadcast
! of numbers, character and a derived type; co_reduce with user functions
! (integer by value, real by reference, character).
module caf_coll_ops
  implicit none
contains
  pure function iadd(a, b) result(c)
    integer, value :: a, b
    integer :: c
    c = a + b
  end function
  pure function rmax(a, b) result(c)
    real(8), intent(in) :: a, b
    real(8) :: c
    c = max(a, b)
  end function
  pure function cmin(a, b) result(c)
    character(len=5), intent(in) :: a, b
    character(len=5) :: c
    c = min(a, b)
  end function
end module

program caf_coll
  use caf_coll_ops
  implicit none
  type pair
    integer :: k
    real :: x
    character(len=4) :: s
  end type
  integer :: me, np, i, nerr = 0
  integer(1) :: k1(3)
  integer(2) :: k2
  integer(8) :: k8(4)
  real :: r4(2, 3)
  real(8) :: r8(10)
  complex :: z
  character(len=5) :: s(2)
  type(pair) :: p
  integer :: st

  me = this_image(); np = num_images()
  k1 = int(me, 1); k2 = int(me, 2); k8 = me
  r4 = real(me); r8 = [(real(i * me, 8), i = 1, 10)]; z = cmplx(me, -me)
  call co_sum(k1); call check(all(k1 == np * (np + 1) / 2), 'co_sum int1')
  call co_sum(k2); call check(k2 == np * (np + 1) / 2, 'co_sum int2')
  call co_sum(k8(1:4:2)); call check(all(k8 == [integer(8) :: np * (np + 1) / 2, me, np * (np + 1) / 2, me]), 'co_sum strided')
  call co_sum(r8, result_image=1, stat=st)
  call check(st == 0, 'co_sum stat')
  if (me == 1) call check(abs(r8(3) - 3d0 * np * (np + 1) / 2) < 1d-9, 'co_sum result_image')
  call co_sum(z); call check(z == cmplx(np * (np + 1) / 2, -np * (np + 1) / 2), 'co_sum complex')
  call co_min(r4); call check(all(r4 == 1.0), 'co_min real')
  r4(1, :) = real(me)
  call co_max(r4(1, :)); call check(all(r4(1, :) == real(np)), 'co_max section')
  s = ['bbbbb', 'zz   ']
  if (me == np) s = ['aaaaa', 'zzz  ']
  call co_min(s(1)); call check(s(1) == 'aaaaa', 'co_min char')
  call co_max(s(2)); call check(s(2) == merge('zzz  ', 'zz   ', np >= 1), 'co_max char')
  ! broadcast
  p = pair(me, real(me) / 2, 'im' // achar(48 + mod(me, 10)))
  call co_broadcast(p, source_image=np)
  call check(p%k == np .and. p%x == real(np) / 2 .and. p%s(1:2) == 'im', 'co_broadcast derived')
  s = 'xxxxx'
  if (me == 1) s = ['hello', 'world']
  call co_broadcast(s, 1); call check(s(2) == 'world', 'co_broadcast char')
  ! reductions with user functions
  i = me
  call co_reduce(i, iadd); call check(i == np * (np + 1) / 2, 'co_reduce value')
  r8(1) = real(me, 8)
  call co_reduce(r8(1), rmax); call check(r8(1) == real(np, 8), 'co_reduce reference')
  s(1) = achar(96 + me) // '----'
  call co_reduce(s(1), cmin); call check(s(1) == 'a----', 'co_reduce char')
  call finish()
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write(*, '(a,i0,2a)') 'image ', this_image(), ': FAILED ', what
      nerr = nerr + 1
    end if
  end subroutine
  subroutine finish()
    integer :: e
    e = nerr
    call co_sum(e)
    if (e /= 0) error stop 'caf_coll: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
