! caf_talloc.f90 - ALLOCATE and DEALLOCATE of coarrays inside CHANGE TEAM,
! a statement of the current team's images only: the two halves allocate
! different coarrays (one half also an event and a second array), access
! them with coindices relative to the team (whole, strided, put and get),
! a lock coarray inside a team is refused with STAT= and a message, and
! after END TEAM a job-wide coarray with an allocatable component is
! reached through another image's component (the *_by_ref calls find it
! by a registration number that the teams' allocations must not shift).
program caf_talloc
  use iso_fortran_env, only: team_type, event_type, lock_type
  implicit none
  type :: box
    integer, allocatable :: c(:)
  end type
  type(team_type) :: half
  integer, allocatable :: x(:)[:], y(:)[:], w(:)[:]
  type(event_type), allocatable :: ev[:]
  type(lock_type), allocatable :: lk[:]
  type(box), allocatable :: d[:]
  integer :: me, np, nerr = 0, t, ti, tn, nb, i, st, cnt
  integer :: v(100)
  character(len=120) :: msg

  me = this_image(); np = num_images()
  t = 1 + mod(me - 1, 2)
  form team(t, half)
  change team(half)
    ti = this_image(); tn = num_images()
    nb = 1 + mod(ti, tn)
    if (t == 1) then
      allocate(x(100)[*])
      call check(all(x == 0), 'team allocation zeroed')
      x = [(ti * 1000 + i, i = 1, 100)]
      allocate(w(3)[*])
      w = ti
      allocate(ev[*])
      sync all
      call check(x(7)[nb] == nb * 1000 + 7, 'get in team')
      v(1:34) = x(1:100:3)[nb]
      call check(all(v(1:34) == [(nb * 1000 + i, i = 1, 100, 3)]), &
                 'strided get in team')
      call check(w(2)[nb] == nb, 'second team coarray')
      sync all
      x(2:100:2)[nb] = -ti
      event post(ev[nb])
      event wait(ev)
      call event_query(ev, cnt)
      call check(cnt == 0, 'event in team')
      sync all
      call check(all(x(2:100:2) == -(1 + mod(ti + tn - 2, tn))), &
                 'strided put in team')
      call check(all(x(1:99:2) == [(ti * 1000 + i, i = 1, 99, 2)]), &
                 'put left the rest')
      msg = ''
      allocate(lk[*], stat=st, errmsg=msg)
      call check(st /= 0, 'lock inside a team refused')
      call check(index(msg, 'CHANGE TEAM') > 0, 'lock message')
      deallocate(x, w, ev)
    else
      allocate(y(7)[*])
      y = ti
      sync all
      call check(y(7)[nb] == nb, 'other team''s coarray')
      deallocate(y)
    end if
    sync all
  end team
  ! A job-wide coarray after the teams' allocations.
  allocate(d[*])
  allocate(d%c(3))
  d%c = me
  sync all
  nb = 1 + mod(me, np)
  call check(d[nb]%c(2) == nb, 'component after team allocations')
  sync all
  deallocate(d)
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
    if (e /= 0) error stop 'caf_talloc: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
