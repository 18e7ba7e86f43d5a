! caf_astop.f90 - an image that stops while the others ALLOCATE (or, with
! CAF_ASTOP=dealloc, DEALLOCATE) a coarray in the initial team: the last
! image stops a moment after the others entered the statement, which has
! no STAT=, so they end in error termination with a message naming the
! stopped image instead of waiting in Telemem's collective allocation
! until its timeout.  (With STAT= the statement gives STAT_STOPPED_IMAGE,
! but gfortran 12 follows a coarray ALLOCATE or DEALLOCATE with a SYNC ALL
! of its own without STAT=, which ends the program the same way.)  The
! test expects exit status 1 and the message.  Needs 2 images or more.
program caf_astop
  use iso_fortran_env
  implicit none
  integer :: me, np
  real(8), allocatable :: early(:)[:], late(:)[:]
  character(len=16) :: mode

  me = this_image(); np = num_images()
  call get_environment_variable('CAF_ASTOP', mode)
  allocate(early(100)[*])
  early = me
  sync all
  if (me == np) then
    call pause(0.3d0)
    stop
  end if
  if (mode == 'dealloc') then
    deallocate(early)
  else
    allocate(late(1000)[*])
  end if
  print '(a)', 'caf_astop: the statement completed with an image stopped'
contains
  subroutine pause(s)
    real(8), intent(in) :: s
    integer(int64) :: c0, c, rate
    call system_clock(c0, rate)
    do
      call system_clock(c)
      if (real(c - c0, 8) / real(rate, 8) >= s) exit
    end do
  end subroutine
end program
