! caf_xfer.f90 - coindexed assignments through libcaf_telemem: contiguous,
! strided and multi-dimensional sections, vector subscripts, kind and type
! conversion, character lengths, scalar broadcast, overlapping sections on
! the same image, and transfers between two other images (sendget).
program caf_xfer
  implicit none
  integer, parameter :: n = 8
  integer :: a(n, n)[*], b(n, n), v(3), me, np, nb, pv, i, j, nerr = 0
  real(8) :: r(n)[*]
  integer(1) :: i1(n)[*]
  character(len=6) :: c(3)[*]
  character(len=3) :: d(3)
  integer, allocatable :: big(:)[:]
  integer :: m(0:4, -2:2)[*]

  me = this_image(); np = num_images()
  nb = merge(1, me + 1, me == np); pv = merge(np, me - 1, me == 1)
  a = reshape([(i + 100 * me, i = 1, n * n)], [n, n])
  r = [(real(i, 8) + me, i = 1, n)]
  i1 = int(me, 1)
  c = ['alpha ', 'beta  ', 'gamma ']
  c(2) = 'im' // achar(48 + mod(me, 10))
  forall (i = 0:4, j = -2:2) m(i, j) = 1000 * me + 10 * i + j
  allocate(big(100000)[*])
  big = me
  sync all

  ! whole array and contiguous column
  b = a(:, :)[nb]
  call check(all(b == reshape([(i + 100 * nb, i = 1, n * n)], [n, n])), 'whole get')
  b(:, 1) = a(:, 3)[nb]
  call check(all(b(:, 1) == [(i + 100 * nb, i = 2 * n + 1, 3 * n)]), 'column get')
  ! strided 2-D section (one strided transfer)
  b = 0
  b(1:4, 1:3) = a(2:8:2, 3:7:2)[nb]
  do j = 1, 3
    do i = 1, 4
      call check(b(i, j) == 2 * i + 2 * j * n + 100 * nb, 'strided get')
    end do
  end do
  ! vector subscripts
  v = [5, 1, 3]
  b(1:3, 1) = a(v, 2)[nb]
  call check(all(b(1:3, 1) == a(v, 2) - 100 * me + 100 * nb), 'vector get')
  ! non-default lower bounds
  b(1:5, 1) = m(:, 1)[nb]
  call check(all(b(1:5, 1) == [(1000 * nb + 10 * i + 1, i = 0, 4)]), 'lbound get')
  ! conversion on get: integer(1) -> integer, real(8) -> integer
  b(1:n, 1) = i1(:)[nb]
  call check(all(b(1:n, 1) == nb), 'kind get')
  b(1:n, 2) = int(r(:)[nb])
  call check(all(b(1:n, 2) == [(i + nb, i = 1, n)]), 'type get')
  ! character of another length
  d = c(:)[nb]
  call check(d(1) == 'alp' .and. d(2) == 'im' // achar(48 + mod(nb, 10)), 'char get')
  ! big contiguous get
  call check(sum(big(:)[nb]) == 100000 * nb, 'big get')
  sync all
  ! big contiguous puts (the runtime's own copy into the block), the
  ! second after the first, and one within the image's own coarray
  big(:)[nb] = -1
  big(:)[nb] = -me
  sync all
  call check(all(big == -pv), 'big put')
  sync all
  big = [(i, i = 1, 100000)]
  big(1:99999)[me] = big(2:100000)
  call check(all(big(1:99999) == [(i + 1, i = 1, 99999)]), 'big put to itself')
  sync all

  ! sends: strided, vector, conversion, scalar broadcast
  a(1:n:2, 1)[nb] = [(-i, i = 1, n / 2)]
  a(v, 4)[nb] = [7, 8, 9]
  r(2:4)[nb] = [1, 2, 3]
  i1(:)[nb] = 42
  c(1)[nb] = 'xy'
  sync all
  call check(all(a(1:n:2, 1) == [(-i, i = 1, n / 2)]), 'strided send')
  call check(a(5, 4) == 7 .and. a(1, 4) == 8 .and. a(3, 4) == 9, 'vector send')
  call check(all(r(2:4) == [1d0, 2d0, 3d0]), 'convert send')
  call check(all(i1 == 42), 'broadcast send')
  call check(c(1) == 'xy    ', 'char send')
  sync all

  ! overlapping sections on this image
  a(:, 5) = [(i, i = 1, n)]
  sync all
  a(2:n, 5)[me] = a(1:n-1, 5)[me]
  call check(all(a(2:n, 5) == [(i, i = 1, n - 1)]), 'overlap')
  ! sendget: from the next image into the previous one
  sync all
  a(:, 6) = me
  sync all
  a(:, 7)[pv] = a(:, 6)[nb]
  sync all
  call check(all(a(:, 7) == mod(me + 1, np) + 1), 'sendget')
  deallocate(big)
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
    if (e /= 0) error stop 'caf_xfer: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
