! caf_bench.f90 - latency and bandwidth of coindexed assignments between
! two images, for any coarray runtime (built once per runtime by
! scripts/bench-caf.sh): a(1:n)[2] = b (put), b = a(1:n)[2] (get) and the
! same with stride 2 (a(1:2n:2)[2]), 8 B to 8 MiB, and for scale libc's
! memcpy of b into image 1's own part of the coarray a (the same kind of
! memory and alignment as a put's destination, without the runtime).
! Image 1 times k transfers and the SYNC MEMORY that completes them;
! image 2 waits.  Output: CSV "op,bytes,usec_per_op,MB_per_s", the median
! of 5 runs; on stderr the page offsets of a and b.
program caf_bench
  use iso_fortran_env, only: int64, real64, error_unit
  use iso_c_binding, only: c_ptr, c_size_t, c_loc, c_intptr_t
  implicit none
  interface
    function memcpy(d, s, n) bind(C, name='memcpy') result(r)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: d, s
      integer(c_size_t), value :: n
      type(c_ptr) :: r
    end function
  end interface
  integer, parameter :: maxn = 1024 * 1024   ! doubles: 8 MiB
  real(real64), allocatable, target :: a(:)[:], b(:)
  integer :: n, op, k, rep, i
  real(real64) :: t(5), med
  integer(int64) :: c0, c1, rate
  type(c_ptr) :: p
  character(len=8), parameter :: ops(5) = [character(len=8) :: &
       'put', 'get', 'put_s2', 'get_s2', 'memcpy']

  allocate(a(2 * maxn)[*], b(2 * maxn))
  a = 1; b = 2
  if (num_images() < 2) error stop 'caf_bench: needs 2 images'
  if (this_image() == 1) then
    print '(a)', 'op,bytes,usec_per_op,MB_per_s'
    write(error_unit, '(a,i0,a,i0)') '# page offsets: a ', &
         mod(transfer(c_loc(a), 0_c_intptr_t), 4096_c_intptr_t), ', b ', &
         mod(transfer(c_loc(b), 0_c_intptr_t), 4096_c_intptr_t)
  end if
  sync all
  do op = 1, 5
    n = 1
    do while (n <= maxn)
      k = max(4, min(2000, int(4 * 1024 * 1024 / (8 * n))))
      do rep = 1, 5
        sync all
        if (this_image() == 1) then
          call system_clock(c0, rate)
          do i = 1, k
            select case (op)
            case (1); a(1:n)[2] = b(1:n)
            case (2); b(1:n) = a(1:n)[2]
            case (3); a(1:2*n:2)[2] = b(1:2*n:2)
            case (4); b(1:2*n:2) = a(1:2*n:2)[2]
            case (5); p = memcpy(c_loc(a), c_loc(b), int(8 * n, c_size_t))
            end select
          end do
          sync memory
          call system_clock(c1)
          t(rep) = real(c1 - c0, real64) / real(rate, real64) / k
        end if
      end do
      if (this_image() == 1) then
        call sort(t)
        med = t(3)
        print '(a,",",i0,",",f0.3,",",f0.1)', trim(ops(op)), 8 * n, &
             med * 1d6, 8d0 * n / med / 1d6
      end if
      n = n * 4
    end do
  end do
  sync all
contains
  subroutine sort(x)
    real(real64), intent(inout) :: x(:)
    integer :: p, q
    real(real64) :: s
    do p = 2, size(x)
      s = x(p); q = p - 1
      do while (q >= 1)
        if (x(q) <= s) exit
        x(q + 1) = x(q); q = q - 1
      end do
      x(q + 1) = s
    end do
  end subroutine
end program
