! caf_tcoll.f90 - collective subroutines inside CHANGE TEAM: co_sum,
! co_min, co_max, co_broadcast and co_reduce over teams of 1 to 4 images
! (a team of 3 at 4 images, of 2 and 1 at 3), with result_image,
! sections, kinds Telemem does not reduce itself, character, a derived
! type, 2.4 MB, zero-size arguments, a fold order test (co_reduce with
! "first" and "last", associative but not commutative), nested teams and
! a team entered twice.
module caf_tcoll_ops
  implicit none
contains
  pure function ifirst(a, b) result(c)
    integer, value :: a, b
    integer :: c
    c = a
    if (.false.) c = b
  end function
  pure function ilast(a, b) result(c)
    integer, value :: a, b
    integer :: c
    c = b
    if (.false.) c = a
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

program caf_tcoll
  use caf_tcoll_ops
  use iso_fortran_env, only: team_type
  implicit none
  type pair
    integer :: k
    real :: x
    character(len=4) :: s
  end type
  type(team_type) :: split, half, inner
  integer :: me, np, nerr = 0, round

  me = this_image(); np = num_images()
  ! 3 + 1 images at 4, 3 at 3, 2 at 2
  form team(merge(1, 2, me <= 3), split)
  ! odd and even images: 2 + 2 at 4, 2 + 1 at 3
  form team(1 + mod(me - 1, 2), half)
  change team(split)
    call suite('split')
  end team
  do round = 1, 2
    change team(half)
      call suite('half')
      form team(1 + mod(this_image() - 1, 2), inner)
      change team(inner)
        call suite('inner')
      end team
    end team
  end do
  call suite('initial')
  call finish()
contains
  subroutine suite(where)
    character(*), intent(in) :: where
    integer :: n, i, j, m, st, t1(3)
    integer(1) :: k1(3)
    integer(8) :: k8(4)
    real(8) :: r8(10)
    real(8), allocatable :: big(:)
    real :: r4(2, 3), none(0)
    complex :: z
    character(len=5) :: s(2)
    character(len=64) :: msg
    type(pair) :: p

    n = num_images(); i = this_image()
    j = n * (n + 1) / 2
    t1 = i
    call co_sum(t1); call check(all(t1 == j), where, 'co_sum int')
    k1 = int(i, 1)
    call co_sum(k1); call check(all(k1 == j), where, 'co_sum int1')
    k8 = i
    call co_sum(k8(1:4:2))
    call check(all(k8 == [integer(8) :: j, i, j, i]), where, 'co_sum strided')
    r8 = [(real(i * m, 8), m = 1, 10)]
    call co_sum(r8, result_image=n, stat=st)
    call check(st == 0, where, 'co_sum stat')
    if (i == n) call check(abs(r8(3) - 3d0 * j) < 1d-9, where, 'co_sum result_image')
    z = cmplx(i, -i)
    call co_sum(z); call check(z == cmplx(j, -j), where, 'co_sum complex')
    r4 = real(i)
    call co_min(r4); call check(all(r4 == 1.0), where, 'co_min real')
    r4(1, :) = real(i)
    call co_max(r4(1, :)); call check(all(r4(1, :) == real(n)), where, 'co_max section')
    s = ['bbbbb', 'zz   ']
    if (i == n) s = ['aaaaa', 'zzz  ']
    call co_min(s(1)); call check(s(1) == 'aaaaa', where, 'co_min char')
    call co_max(s(2)); call check(s(2) == 'zzz  ', where, 'co_max char')
    p = pair(i, real(i) / 2, 'im' // achar(48 + mod(i, 10)))
    call co_broadcast(p, source_image=n)
    call check(p%k == n .and. p%x == real(n) / 2 .and. p%s(1:2) == 'im', where, 'co_broadcast derived')
    s = 'xxxxx'
    if (i == 1) s = ['hello', 'world']
    call co_broadcast(s, 1); call check(s(2) == 'world', where, 'co_broadcast char')
    j = 10 * i
    call co_reduce(j, ifirst); call check(j == 10, where, 'co_reduce first')
    j = 10 * i
    call co_reduce(j, ilast); call check(j == 10 * n, where, 'co_reduce last')
    r8(1) = real(i, 8)
    call co_reduce(r8(1), rmax); call check(r8(1) == real(n, 8), where, 'co_reduce reference')
    s(1) = achar(96 + i) // '----'
    call co_reduce(s(1), cmin); call check(s(1) == 'a----', where, 'co_reduce char')
    allocate(big(300000))
    big = real(i, 8)
    call co_sum(big, stat=st, errmsg=msg)
    call check(st == 0 .and. all(big == real(n * (n + 1) / 2, 8)), where, 'co_sum 2.4 MB')
    call co_broadcast(big, n)
    call check(all(big == real(n * (n + 1) / 2, 8)), where, 'co_broadcast 2.4 MB')
    call co_sum(none); call co_broadcast(none, 1)
  end subroutine
  subroutine check(ok, where, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: where, what
    if (.not. ok) then
      write(*, '(a,i0,4a)') 'image ', this_image(), ': FAILED ', what, ' in team ', where
      nerr = nerr + 1
    end if
  end subroutine
  subroutine finish()
    integer :: e
    e = nerr
    call co_sum(e)
    if (e /= 0) error stop 'caf_tcoll: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
