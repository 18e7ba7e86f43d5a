! caf_coll_bench.f90 - image control and collectives at any number of
! images, for any coarray runtime: SYNC ALL, SYNC IMAGES(*), co_sum of one
! integer, of 1,000 and of 131,072 doubles (1 MiB: k / 20 calls),
! co_broadcast of 8 bytes, each in the
! initial team and inside CHANGE TEAM of a team of every image, measured
! in rounds that alternate the operations.  Each image times k calls; the
! figure is the slowest image's mean, median over the rounds.
! Output: CSV "op,images,usec_per_op".  Argument: k (default 200).
program caf_coll_bench
  use iso_fortran_env, only: int64, real64, team_type
  implicit none
  integer, parameter :: nops = 12, half = nops / 2, rounds = 5
  character(len=24), parameter :: names(nops) = [character(len=24) :: &
       'sync_all', 'sync_images_all', 'co_sum_i4', 'co_sum_r8x1000', &
       'co_sum_r8x131072', 'co_bcast_8', 'team_sync_all', &
       'team_sync_images', 'team_co_sum_i4', 'team_co_sum_r8x1000', &
       'team_co_sum_r8x131072', 'team_co_bcast_8']
  type(team_type) :: everyone
  real(real64) :: t(rounds, nops), x(1000), tt
  real(real64), allocatable :: y(:)
  integer :: k = 200, op, r, i, v
  integer(int64) :: c0, c1, rate
  character(len=32) :: arg

  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read(arg, *) k
  end if
  form team(1, everyone)
  x = 1
  allocate(y(131072))
  y = 1
  if (this_image() == 1) print '(a)', 'op,images,usec_per_op'
  do r = 1, rounds
    do op = 1, nops
      sync all
      call system_clock(c0, rate)
      if (op <= half) then
        do i = 1, k / merge(20, 1, op == 5)
          call one(op)
        end do
      else
        change team(everyone)
          do i = 1, k / merge(20, 1, op == half + 5)
            call one(op - half)
          end do
        end team
      end if
      call system_clock(c1)
      tt = real(c1 - c0, real64) / real(rate, real64) / &
           (k / merge(20, 1, op == 5 .or. op == half + 5))
      call co_max(tt)
      t(r, op) = tt
    end do
  end do
  if (this_image() == 1) then
    do op = 1, nops
      call sort(t(:, op))
      print '(a,",",i0,",",f0.3)', trim(names(op)), num_images(), &
           t((rounds + 1) / 2, op) * 1d6
    end do
  end if
contains
  subroutine one(which)
    integer, intent(in) :: which
    select case (which)
    case (1); sync all
    case (2); sync images(*)
    case (3); v = 1; call co_sum(v)
    case (4); call co_sum(x)
    case (5); call co_sum(y)
    case (6); call co_broadcast(tt, 1)
    end select
  end subroutine
  subroutine sort(y)
    real(real64), intent(inout) :: y(:)
    integer :: p, q
    real(real64) :: s
    do p = 2, size(y)
      s = y(p); q = p - 1
      do while (q >= 1)
        if (y(q) <= s) exit
        y(q + 1) = y(q); q = q - 1
      end do
      y(q + 1) = s
    end do
  end subroutine
end program
