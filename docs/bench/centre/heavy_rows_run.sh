#!/bin/bash
# The heavy-row preconditioner's measurement (docs/bench/centre.md, "The heavy-row
# preconditioner"): at each d the direct centre (dense at d <= 32, streamed beyond),
# the iterative centre with the population preconditioner alone (harness_old) and with
# the heavy-row preconditioner (harness_new), one after the other, each in its own process.
# harness_new: heavy_rows_harness.cpp compiled with the release preset's flags
#   (-O3 -march=x86-64-v3 -mtune=generic -ffp-contract=off -fopenmp -std=c++20, Eigen's
#   -DEIGEN_DONT_PARALLELIZE -DEIGEN_NO_CPUID) against src/, tests/support/ and the release
#   build's libmhalearn_core.a (with the heavy-row preconditioner);
# harness_old: the same, with src/geometry/convex_body_centre_iterative.cpp and
#   iterative_centre.hpp of commit 72b82b4 (population preconditioner only) compiled in
#   ahead of the library.
# usage: heavy_rows_run.sh D...
for d in "$@"; do
  for v in direct old new; do
    echo "== d=$d $v  load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ $v = direct ]; then cmd="./harness_new $d direct"; else cmd="./harness_$v $d"; fi
    /usr/bin/time -f "process: %e s wall, %U user, %S sys, %M KB peak RSS" nice -n 10 $cmd 2>&1
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
