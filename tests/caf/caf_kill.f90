! caf_kill.f90 - a killed image is a failed image: the last image kills
! itself with SIGKILL; the others get STAT_FAILED_IMAGE from SYNC ALL and
! SYNC IMAGES within seconds (not a hang), image_status() and
! failed_images() name it, and the survivors still synchronise.  Run
! under telemem-run --keep-going with 2 images or more.
program caf_kill
  use iso_fortran_env
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function c_getpid() bind(c, name='getpid')
      import :: c_int
    end function
    integer(c_int) function c_kill(pid, sig) bind(c, name='kill')
      import :: c_int
      integer(c_int), value :: pid, sig
    end function
  end interface
  integer :: me, np, st, nerr = 0, i
  integer(int64) :: t0, t1, rate
  real :: secs

  me = this_image(); np = num_images()
  if (np < 2) then
    print '(a)', 'Test passed.'
    stop
  end if
  sync all
  if (me == np) i = c_kill(c_getpid(), 9_c_int)
  call system_clock(t0, rate)
  sync all(stat=st)
  call system_clock(t1)
  secs = real(t1 - t0) / real(rate)
  call check(st == STAT_FAILED_IMAGE, 'sync all after a kill')
  call check(secs < 20.0, 'noticed within seconds')
  sync images(np, stat=st)
  call check(st == STAT_FAILED_IMAGE, 'sync images with the killed image')
  call check(image_status(np) == STAT_FAILED_IMAGE, 'image_status')
  call check(any(failed_images() == np), 'failed_images')
  sync images([(i, i = 1, np - 1)], stat=st)
  call check(st == 0, 'survivors synchronise')
  if (nerr /= 0) error stop 'caf_kill: failures'
  if (me == 1) print '(a,f5.2,a)', 'noticed after ', secs, ' s'
  if (me == 1) print '(a)', 'Test passed.'
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write(*, '(a,i0,3a,i0)') 'image ', this_image(), ': FAILED ', what, ' stat ', st
      nerr = nerr + 1
    end if
  end subroutine
end program
