! caf_alloc.f90 - allocatable coarrays and derived-type components through
! libcaf_telemem: ALLOCATE / DEALLOCATE of coarrays (scalar, array,
! derived type), allocatable components allocated by one image alone and
! reached from others (get_by_ref, send_by_ref, sendget_by_ref), nested
! components, ALLOCATED() of a remote component (is_present).
program caf_alloc
  implicit none
  type inner
    real :: w(3)
  end type
  type node
    integer :: id
    integer, allocatable :: v(:)
    real, allocatable :: s
    type(inner) :: in(2)
  end type
  type(node) :: obj[*]
  type(node), allocatable :: dyn[:]
  real(8), allocatable :: ar(:, :)[:]
  integer :: me, np, nb, pv, i, got(4), nerr = 0
  real :: x

  me = this_image(); np = num_images()
  nb = merge(1, me + 1, me == np); pv = merge(np, me - 1, me == 1)
  obj%id = me
  obj%in(1)%w = [1, 2, 3] * me
  obj%in(2)%w = -me
  if (mod(me, 2) == 1) then
    allocate(obj%v(4), source=[(10 * me + i, i = 1, 4)])
    allocate(obj%s, source=real(me))
  end if
  allocate(ar(3, 5)[*], source=real(me, 8))
  allocate(dyn[*])
  allocate(dyn%v(2), source=[me, -me])
  sync all

  call check(obj[nb]%id == nb, 'component get')
  call check(all(obj[nb]%in(2)%w == -nb), 'nested get')
  call check(obj[nb]%in(1)%w(3) == 3 * nb, 'nested element get')
  call check(allocated(obj[nb]%v) .eqv. (mod(nb, 2) == 1), 'allocated remote')
  if (mod(nb, 2) == 1) then
    got = obj[nb]%v
    call check(all(got == [(10 * nb + i, i = 1, 4)]), 'alloc component get')
    call check(obj[nb]%v(3) == 10 * nb + 3, 'alloc element get')
    x = obj[nb]%s
    call check(x == real(nb), 'alloc scalar get')
    got(1:2) = obj[nb]%v(2:4:2)
    call check(all(got(1:2) == [10 * nb + 2, 10 * nb + 4]), 'alloc strided get')
  end if
  call check(all(dyn[nb]%v == [nb, -nb]), 'allocatable coarray component')
  call check(all(ar(:, 2)[nb] == real(nb, 8)), 'allocatable coarray get')
  sync all
  ! sends into components of the next image
  obj[nb]%in(2)%w(2) = 99.0
  dyn[nb]%v(1) = 1000 + me
  ! (gfortran builds the remote section from the local component's
  ! descriptor: send only where this image's v is allocated too.)
  if (mod(nb, 2) == 1 .and. mod(me, 2) == 1) obj[nb]%v(1:2) = [7, 8]
  sync all
  call check(obj%in(2)%w(2) == 99.0, 'nested send')
  call check(dyn%v(1) == 1000 + pv, 'alloc component send')
  if (mod(me, 2) == 1 .and. mod(pv, 2) == 1) &
    call check(all(obj%v(1:2) == [7, 8]), 'alloc section send')
  sync all
  ! component to component between two images
  dyn[pv]%v(2) = obj[nb]%id
  sync all
  call check(dyn%v(2) == mod(me + 1, np) + 1, 'sendget_by_ref')
  deallocate(ar, dyn)
  allocate(ar(10, 10)[*])
  ar = me
  sync all
  call check(ar(10, 10)[nb] == nb, 'reallocate')
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
    if (e /= 0) error stop 'caf_alloc: failures'
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end program
