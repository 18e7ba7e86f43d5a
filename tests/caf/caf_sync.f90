! caf_sync.f90 - image control and synchronisation through libcaf_telemem:
! SYNC IMAGES with lists and *, SYNC MEMORY, atomics (define, ref, add,
! and, or, xor, fetch forms, cas), LOCK with and without ACQUIRED_LOCK,
! CRITICAL, EVENT POST / WAIT (UNTIL_COUNT) / EVENT_QUERY.
program caf_sync
  use iso_fortran_env
  implicit none
  integer :: me, np, i, nerr = 0, cnt, old
  integer(atomic_int_kind) :: at[*], av
  type(lock_type) :: lk[*]
  type(event_type) :: ev[*]
  integer :: counter[*], ring[*]
  logical :: got

  me = this_image(); np = num_images()
  counter = 0; ring = 0
  call atomic_define(at, 0)
  sync all
  ! ring: each image waits for the previous one
  if (me > 1) sync images(me - 1)
  ring[np] = ring[np] + me
  sync memory
  if (me < np) sync images(me + 1)
  sync all
  if (me == np) call check(ring == np * (np + 1) / 2, 'sync images ring')
  sync images(*)
  ! atomics on image 1
  call atomic_add(at[1], me)
  sync all
  call atomic_ref(av, at[1]); call check(av == np * (np + 1) / 2, 'atomic_add')
  sync all
  if (me == 1) call atomic_define(at[1], 0)
  sync all
  call atomic_fetch_or(at[1], ishft(1, me - 1), old)
  sync all
  call atomic_ref(av, at[1]); call check(av == 2**np - 1, 'atomic_or')
  sync all
  call atomic_fetch_and(at[1], not(ishft(1, me - 1)), old)
  sync all
  call atomic_ref(av, at[1]); call check(av == 0, 'atomic_and')
  sync all
  call atomic_xor(at[1], 5)
  sync all
  call atomic_ref(av, at[1]); call check(av == merge(5, 0, mod(np, 2) == 1), 'atomic_xor')
  sync all
  if (me == 1) call atomic_cas(at[1], old, av, 77)
  sync all
  call atomic_ref(av, at[1]); call check(av == 77, 'atomic_cas')
  ! locks and critical
  do i = 1, 20
    lock(lk[1])
    counter[1] = counter[1] + 1
    unlock(lk[1])
  end do
  ! LOCK(lk[1]) and CRITICAL are different locks: an image in the critical
  ! construct and one still in its LOCK loop would race on counter[1].
  sync all
  do i = 1, 10
    critical
      counter[1] = counter[1] + 1
    end critical
  end do
  sync all
  if (me == 1) call check(counter == 30 * np, 'lock/critical')
  if (me == 1) then
    lock(lk)
    got = .true.
  end if
  sync all
  if (me /= 1) then
    lock(lk[1], acquired_lock=got)
    call check(.not. got, 'acquired_lock busy')
  end if
  sync all
  if (me == 1) unlock(lk)
  sync all
  ! events: everyone posts to image 1, which waits for all
  event post(ev[1])
  if (me == 1) then
    event wait(ev, until_count=np)
    call event_query(ev, cnt); call check(cnt == 0, 'event wait')
  end if
  sync all
  event post(ev[me])
  call event_query(ev, cnt); call check(cnt == 1, 'event query')
  event wait(ev)
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
    if (e /= 0) error stop 'caf_sync: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
