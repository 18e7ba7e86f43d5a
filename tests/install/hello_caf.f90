! hello_caf.f90 - a Coarray Fortran client of the installed libcaf_telemem
! (tests/install): each image reads its neighbour's coarray and says ok.
program hello_caf
  implicit none
  integer :: a[*]
  a = this_image()
  sync all
  if (a[mod(this_image(), num_images()) + 1] == mod(this_image(), num_images()) + 1) &
    print '(a,i0,a)', 'image ', this_image(), ' ok'
end program
