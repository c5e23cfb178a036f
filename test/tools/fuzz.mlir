// The mutation fuzzer (fuzz/mutate.py, issue 38): every saved finding, fixed, stays a
// clean result or a clean error in its mode; and a short fixed-seed run of the three
// modes (parse, raise, flywheel-tpu) finds nothing: no crash, contained panic, silent
// failure, hang, or output file left by a failure. The long run is documented in
// docs/testing.md.
// RUN: %python %S/../../fuzz/mutate.py --replay %S/../../fuzz/regressions --tool flywheel-opt | FileCheck %s --check-prefix=REPLAY
// REPLAY: 18 regression inputs replayed: 0 finding(s)
// RUN: %python %S/../../fuzz/mutate.py --seed 7 --count 150 --tool flywheel-opt --save %t.findings | FileCheck %s --check-prefix=FUZZ
// FUZZ: 150 runs of 150 mutants (parse, raise, tpu; seed 7): {{[0-9]+}} accepted, {{[0-9]+}} clean errors, 0 finding(s)
