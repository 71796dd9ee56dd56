! Built once when the build is configured: does the MPI's Fortran wrapper compile?
program fortran_probe
end program fortran_probe
