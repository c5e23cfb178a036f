// flywheel-tile{auto-blocks=true}: each candidate block size is tiled, lowered and
// compiled with libtpu's static profile for the target; the fewest cycles win, and the
// decision is cached (FLYWHEEL_CACHE_DIR) so a rerun compiles nothing.

// 1024 tokens: the candidates cap to two distinct plans, 512x1024 and 1024x1024.
// RUN: rm -rf %t.cache
// RUN: sed 's/x256x/x1024x/g' %S/../Inputs/attention-bnth-bf16.mlir > %t.input.mlir
// RUN: env FLYWHEEL_CACHE_DIR=%t.cache flywheel-opt %t.input.mlir '--flywheel-tile=auto-blocks=true target=v6e remarks=true' -o %t.tiled.mlir 2>&1 | FileCheck %s --check-prefix=SEARCH
// SEARCH: remark: blocks [[CHOSEN:[0-9]+x1024]] chosen by search on v6e (static cycles 512x1024: {{[0-9]+}}, 1024x1024: {{[0-9]+}})
// SEARCH: remark: tiled into a Mosaic kernel ({{.*}}, blocks [[CHOSEN]],
// The same op again: the cached decision, no compile.
// RUN: env FLYWHEEL_CACHE_DIR=%t.cache flywheel-opt %t.input.mlir '--flywheel-tile=auto-blocks=true target=v6e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=CACHED
// CACHED: remark: blocks {{[0-9]+x1024}} chosen by cached search on v6e
// Another target is another search.
// RUN: env FLYWHEEL_CACHE_DIR=%t.cache flywheel-opt %t.input.mlir '--flywheel-tile=auto-blocks=true target=tpu7x remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=TPU7X
// TPU7X: remark: blocks {{[0-9]+x1024}} chosen by search on tpu7x

// Near miss: an op the kernel does not serve is not searched (no compile); it stays
// for the reference lowering.
// RUN: flywheel-opt %S/../Inputs/segments.mlir '--flywheel-tile=auto-blocks=true remarks=true' 2>&1 | FileCheck %s --check-prefix=KEPT
// KEPT-NOT: chosen by
// KEPT: remark: kept for the reference lowering: segment ids are not in the baseline kernel yet

// A boolean mask reaches the kernel widened to i32 by a select: libtpu 0.0.51's static
// profiler aborts on a convert of it (a DMA copy it cannot price), so with one every
// candidate of this masked BTNH kernel failed and the configured blocks were used.
// RUN: env FLYWHEEL_CACHE_DIR=%t.cache flywheel-opt %S/../Inputs/attention-btnh-mask-bf16.mlir '--flywheel-tile=auto-blocks=true target=v6e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=MASKED
// MASKED-NOT: warning
// MASKED: remark: blocks 128x128 chosen by search on v6e (static cycles 128x128: {{[1-9][0-9]*}})

// Diagnostics: when no candidate compiles (here libtpu is missing), the pass fails at
// the op and writes no output.
// RUN: rm -rf %t.cache
// RUN: env FLYWHEEL_CACHE_DIR=%t.cache FLYWHEEL_LIBTPU=/nonexistent/libtpu.so not flywheel-opt %t.input.mlir --flywheel-tile=auto-blocks=true -o %t.failed.mlir 2>&1 | FileCheck %s --check-prefix=FAILED
// FAILED: error: 'flywheel.attention' op: auto block search failed: no candidate block size compiled
// RUN: not test -e %t.failed.mlir
