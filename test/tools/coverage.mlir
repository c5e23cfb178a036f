// The real-library corpus (test/Inputs/real, test/fixtures/real.json) raises as its
// manifest says, every raised op gets its kernel on v6e and tpu7x, the v6e program checks
// against the original on the CPU plugin, near misses are left alone;
// and docs/coverage.md is the table this run makes.
// RUN: %python %S/../../test/fixtures/coverage.py --kernels --markdown %t.md > %t.log || (cat %t.log; false)
// RUN: diff %t.md %S/../../docs/coverage.md
