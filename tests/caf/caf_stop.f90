! caf_stop.f90 - stopped and failed images through libcaf_telemem: the
! last image stops early (STOP) and the first fails (FAIL IMAGE); the
! others see STAT_STOPPED_IMAGE / STAT_FAILED_IMAGE from SYNC IMAGES,
! SYNC ALL and co_sum (small, and 160 KB through the agreement),
! stopped_images() / failed_images() and image_status() name them, and
! nobody hangs.  Needs 3 images or more.
program caf_stop
  use iso_fortran_env
  implicit none
  integer :: me, np, st, nerr = 0, x
  integer, allocatable :: survivors(:)
  real(8), allocatable :: big(:)

  me = this_image(); np = num_images()
  if (np < 3) then
    if (me == 1) print '(a)', 'Test passed.'
    stop
  end if
  sync all
  if (me == np) stop
  if (me == 1) fail image
  sync images(np, stat=st)
  call check(st == STAT_STOPPED_IMAGE, 'sync images with a stopped image')
  sync images(1, stat=st)
  call check(st == STAT_FAILED_IMAGE, 'sync images with a failed image')
  sync all(stat=st)
  call check(st == STAT_FAILED_IMAGE, 'sync all with a failed image')
  x = 1
  call co_sum(x, stat=st)
  call check(st == STAT_FAILED_IMAGE, 'co_sum with a failed image')
  allocate(big(20000))
  big = 1
  call co_sum(big, stat=st)
  call check(st == STAT_FAILED_IMAGE, 'co_sum of 160 KB with a failed image')
  deallocate(big)
  ! (gfortran 12 copies back only the data of "l = failed_images()",
  ! not the bounds: use the results in expressions.)
  call check(size(stopped_images()) == 1, 'stopped_images size')
  call check(all(stopped_images() == [np]), 'stopped_images')
  call check(size(failed_images()) == 1, 'failed_images size')
  call check(all(failed_images() == [1]), 'failed_images')
  call check(image_status(1) == STAT_FAILED_IMAGE, 'image_status failed')
  call check(image_status(np) == STAT_STOPPED_IMAGE, 'image_status stopped')
  call check(image_status(me) == 0, 'image_status running')
  ! The survivors finish together (so none has stopped during the checks).
  survivors = [(st, st = 2, np - 1)]
  sync images(survivors)
  if (nerr /= 0) error stop 'caf_stop: failures'
  if (me == 2) print '(a)', 'Test passed.'
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write(*, '(a,i0,2a)') 'image ', this_image(), ': FAILED ', what
      nerr = nerr + 1
    end if
  end subroutine
end program
