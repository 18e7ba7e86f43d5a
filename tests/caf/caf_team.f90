! caf_team.f90 - teams through libcaf_telemem: FORM TEAM (gfortran 12
! has no NEW_INDEX=), CHANGE TEAM (this_image, num_images, coindexed
! access and SYNC ALL relative to the team), SYNC TEAM, TEAM_NUMBER,
! END TEAM.
program caf_team
  use iso_fortran_env, only: team_type
  implicit none
  type(team_type) :: half, rev
  integer :: me, np, nerr = 0, t, nt, mine, other
  integer :: a[*]

  me = this_image(); np = num_images()
  t = 1 + mod(me - 1, 2)
  a = me
  form team(t, half)
  call check(team_number() == -1, 'initial team number')
  change team(half)
    nt = (np + 2 - t) / 2
    call check(team_number() == t, 'team_number')
    call check(num_images() == nt, 'num_images in team')
    call check(this_image() == (me + 1) / 2, 'this_image in team')
    mine = this_image()
    sync all
    other = a[1]
    call check(other == t, 'coindex in team')
    sync team(half)
  end team
  call check(this_image() == me .and. num_images() == np, 'end team')
  form team(1, rev)
  change team(rev)
    call check(this_image() == me .and. num_images() == np, 'one team')
    other = a[np]
    call check(other == np, 'coindex in one team')
  end team
  sync all
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
    if (e /= 0) error stop 'caf_team: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
