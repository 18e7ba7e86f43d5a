! caf_collstop.f90 - an image that stops while the others are in a
! collective: the last image stops a moment after the others entered
! co_sum (inside CHANGE TEAM of every image), and they get STAT_STOPPED_IMAGE naming it instead of waiting until
! TELEMEM_TIMEOUT; the next collective and SYNC ALL say the same.  Needs
! 2 images or more.
program caf_collstop
  use iso_fortran_env
  implicit none
  type(team_type) :: everyone
  integer :: me, np, st, v, nerr = 0, i
  integer, allocatable :: survivors(:)
  character(len=80) :: msg

  me = this_image(); np = num_images()
  if (np < 2) then
    print '(a)', 'Test passed.'
    stop
  end if
  form team(1, everyone)
  change team(everyone)
    if (me == np) then
      call pause(0.3d0)
      stop
    end if
    v = 1
    msg = ''
    call sum_with_errmsg(v, st, msg)
    call check(st == STAT_STOPPED_IMAGE, 'co_sum in a team while an image stops')
    call check(index(msg, 'stopped') > 0, 'errmsg names the stopped image: ' // trim(msg))
    call co_broadcast(v, 1, stat=st)
    call check(st == STAT_STOPPED_IMAGE, 'co_broadcast in a team with a stopped image')
    ! gfortran 12 passes this ERRMSG= by value: the runtime must not write
    ! through the length it finds in its place.
    msg = 'unchanged'
    call co_max(v, stat=st, errmsg=msg)
    call check(st == STAT_STOPPED_IMAGE, 'co_max in a team with a stopped image')
    sync all(stat=st)
    call check(st == STAT_STOPPED_IMAGE, 'sync all in a team with a stopped image')
    survivors = [(i, i = 1, np - 1)]
    sync images(survivors)
    if (nerr /= 0) error stop 'caf_collstop: failures'
    if (me == 1) print '(a)', 'Test passed.'
    ! END TEAM would synchronise with the stopped image: stop here.
    stop
  end team
contains
  ! An assumed-length ERRMSG= is passed by reference.
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
