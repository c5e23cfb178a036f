// The generated documentation is current: docs/benchmarks.md's tables and the README's
// results block are what bench/report.py makes from bench/*.json, and docs/passes.md is
// what flywheel-opt prints from the pass declarations.
// RUN: %python %S/../../bench/report.py --check
// RUN: flywheel-opt --pass-docs | diff - %S/../../docs/passes.md
