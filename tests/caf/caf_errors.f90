! caf_errors.f90 - bad input through libcaf_telemem gives STAT= and an
! ERRMSG= that names the problem: an image index out of range, an image
! listed twice in SYNC IMAGES, LOCK of a lock this image holds
! (STAT_LOCKED), UNLOCK of a free lock (STAT_UNLOCKED) and of one another
! image holds (STAT_LOCKED_OTHER_IMAGE), co_sum and co_reduce of arguments
! whose sizes differ between the images (every image gets the error),
! also when one image's fits in the initial team's slots and the
! others' do not (also co_sum inside CHANGE TEAM), and co_broadcast of
! such arguments.
! A module procedure: an internal one passed to co_reduce would need a
! trampoline on an executable stack.
module caf_errors_ops
  implicit none
contains
  pure function iadd(a, b) result(c)
    integer, value :: a, b
    integer :: c
    c = a + b
  end function
end module

program caf_errors
  use caf_errors_ops
  use iso_fortran_env
  implicit none
  type(lock_type) :: lk[*]
  type(team_type) :: all
  integer :: me, np, st, nerr = 0, bad
  integer, allocatable :: v(:)
  character(len=120) :: msg

  me = this_image(); np = num_images()
  bad = np + 1
  msg = ''
  sync images(bad, stat=st, errmsg=msg)
  call check(st /= 0 .and. index(msg, 'out of range') > 0, 'sync images range')
  if (np >= 2) then
    msg = ''
    sync images([1, 2, 1], stat=st, errmsg=msg)
    call check(st /= 0 .and. index(msg, 'twice') > 0, 'sync images twice')
  end if
  sync all
  msg = ''
  unlock(lk[me], stat=st, errmsg=msg)
  ! (gfortran's STAT_UNLOCKED is 0: ERRMSG= tells.)
  call check(st == STAT_UNLOCKED .and. index(msg, 'not locked') > 0, 'unlock free')
  lock(lk[me])
  lock(lk[me], stat=st, errmsg=msg)
  call check(st == STAT_LOCKED .and. index(msg, 'already holds') > 0, 'lock twice')
  sync all
  if (np >= 2) then
    unlock(lk[merge(2, 1, me == 1)], stat=st, errmsg=msg)
    call check(st == STAT_LOCKED_OTHER_IMAGE, 'unlock other')
  end if
  sync all
  unlock(lk[me])
  sync all
  if (np >= 2) then
    allocate(v(merge(3, 2, me == 1)))
    v = 1
    msg = ''
    call sum_sizes(v, st, msg)
    call check(st /= 0 .and. index(msg, 'differs in size') > 0, 'co_sum of different sizes')
    msg = ''
    call reduce_sizes(v, st, msg)
    call check(st /= 0 .and. index(msg, 'differs in size') > 0, 'co_reduce of different sizes')
    deallocate(v)
    ! One image's argument fits in the initial team's slots, the others'
    ! do not: every image still meets the others and gets the error.
    allocate(v(merge(1, 1000, me == 1)))
    v = 1
    msg = ''
    call sum_sizes(v, st, msg)
    call check(st /= 0 .and. index(msg, 'differs in size') > 0, 'co_sum of 4 and 4000 bytes')
    msg = ''
    call bcast_sizes(v, st, msg)
    call check(st /= 0 .and. index(msg, 'differs in size') > 0, 'co_broadcast of 4 and 4000 bytes')
    msg = ''
    call reduce_sizes(v, st, msg)
    call check(st /= 0 .and. index(msg, 'differs in size') > 0, 'co_reduce of 4 and 4000 bytes')
    ! The same inside CHANGE TEAM (the first image's slots, then trees).
    form team(1, all)
    change team(all)
      msg = ''
      call sum_sizes(v, st, msg)
      call check(st /= 0 .and. index(msg, 'differs in size') > 0, 'team co_sum of 4 and 4000 bytes')
      ! co_broadcast (trees, no reduction phase) from image 2: an image
      ! that receives a size of another than its own gets the error; the
      ! source and the others may finish first, but none waits for good.
      msg = ''
      call bcast_sizes(v, st, msg, min(2, np))
      if (me == 1) call check(st /= 0 .and. index(msg, 'differs in size') > 0, &
                              'team co_broadcast of 4 and 4000 bytes')
      ! The first image on the trees, the others in the flat step.
      deallocate(v)
      allocate(v(merge(1000, 1, me == 1)))
      v = 1
      msg = ''
      call sum_sizes(v, st, msg)
      call check(st /= 0 .and. index(msg, 'differs in size') > 0, 'team co_sum of 4000 and 4 bytes')
      msg = ''
      call bcast_sizes(v, st, msg)
      if (me /= 1) call check(st /= 0 .and. index(msg, 'differs in size') > 0, &
                              'team co_broadcast of 4000 and 4 bytes')
    end team
    deallocate(v)
  end if
  call finish()
contains
  ! ERRMSG= through assumed-length dummies: gfortran 12 passes a local
  ! fixed-length variable of a collective's caller by value.
  subroutine sum_sizes(x, st, m)
    integer, intent(inout) :: x(:)
    integer, intent(out) :: st
    character(*), intent(inout) :: m
    call co_sum(x, stat=st, errmsg=m)
  end subroutine
  subroutine bcast_sizes(x, st, m, source)
    integer, intent(inout) :: x(:)
    integer, intent(out) :: st
    character(*), intent(inout) :: m
    integer, intent(in), optional :: source
    integer :: src
    src = 1
    if (present(source)) src = source
    call co_broadcast(x, src, stat=st, errmsg=m)
  end subroutine
  subroutine reduce_sizes(x, st, m)
    integer, intent(inout) :: x(:)
    integer, intent(out) :: st
    character(*), intent(inout) :: m
    call co_reduce(x, iadd, stat=st, errmsg=m)
  end subroutine

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write(*, '(a,i0,3a)') 'image ', this_image(), ': FAILED ', what, ': ' // trim(msg)
      nerr = nerr + 1
    end if
  end subroutine
  subroutine finish()
    integer :: e
    e = nerr
    call co_sum(e)
    if (e /= 0) error stop 'caf_errors: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
