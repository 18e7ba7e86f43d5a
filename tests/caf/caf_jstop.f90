! caf_jstop.f90 - an image that stops while the others are in the
! initial team's collectives: the last image stops a moment after the
! others entered co_sum, and they get STAT_STOPPED_IMAGE naming it
! instead of waiting; co_broadcast (small and 160 KB), co_max, co_reduce,
! co_sum of 160 KB and SYNC ALL say the same, every image alike.  Needs 2
! images or more.
module caf_jstop_ops
  implicit none
contains
  pure function imax(a, b) result(c)
    integer, value :: a, b
    integer :: c
    c = max(a, b)
  end function
end module

program caf_jstop
  use caf_jstop_ops
  use iso_fortran_env
  implicit none
  integer :: me, np, st, v, nerr = 0, i
  integer, allocatable :: survivors(:)
  real(8), allocatable :: big(:)
  character(len=80) :: msg

  me = this_image(); np = num_images()
  if (np < 2) then
    print '(a)', 'Test passed.'
    stop
  end if
  sync all
  if (me == np) then
    call pause(0.3d0)
    stop
  end if
  v = 1
  msg = ''
  call sum_with_errmsg(v, st, msg)
  call check(st == STAT_STOPPED_IMAGE, 'co_sum while an image stops')
  call check(index(msg, 'stopped') > 0, 'errmsg names the stopped image: ' // trim(msg))
  call co_broadcast(v, 1, stat=st)
  call check(st == STAT_STOPPED_IMAGE, 'co_broadcast with a stopped image')
  call co_max(v, stat=st)
  call check(st == STAT_STOPPED_IMAGE, 'co_max with a stopped image')
  call co_reduce(v, imax, stat=st)
  call check(st == STAT_STOPPED_IMAGE, 'co_reduce with a stopped image')
  allocate(big(20000))
  big = me
  call co_sum(big, stat=st)
  call check(st == STAT_STOPPED_IMAGE, 'co_sum of 160 KB with a stopped image')
  call co_broadcast(big, 1, stat=st)
  call check(st == STAT_STOPPED_IMAGE, 'co_broadcast of 160 KB with a stopped image')
  deallocate(big)
  sync all(stat=st)
  call check(st == STAT_STOPPED_IMAGE, 'sync all with a stopped image')
  survivors = [(i, i = 1, np - 1)]
  sync images(survivors)
  deallocate(survivors)
  if (nerr /= 0) error stop 'caf_jstop: failures'
  if (me == 1) print '(a)', 'Test passed.'
contains
  subroutine sum_with_errmsg(v, st, m)
    integer, intent(inout) :: v
    integer, intent(out) :: st
    character(*), intent(inout) :: m
    call co_sum(v, stat=st, errmsg=m)
  end subroutine
  subroutine pause(s)
    real(8), intent(in) :: s
    integer(int64) :: c0, c, rate
    call system_clock(c0, rate)
    do
      call system_clock(c)
      if (real(c - c0, 8) / real(rate, 8) >= s) exit
    end do
  end subroutine
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write(*, '(a,i0,2a)') 'image ', this_image(), ': FAILED ', what
      nerr = nerr + 1
    end if
  end subroutine
end program
