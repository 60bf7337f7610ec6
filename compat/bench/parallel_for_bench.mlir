// The parallel-for kernel of hal-bench's figure mlir_parallel_for_vs_mlir:
// C[i, j] = A[i, j] + B[i, j] over the whole of A written as one
// scf.parallel, which -async-parallel-for (num-workers from the runtime)
// turns into async.execute blocks dispatched by recursive splitting; the
// caller runs the first block and then awaits the group of the others.
//
// The build lowers it to an object once (lower_mlir.py) and links that
// object twice: into a module on libhal-async-runtime and into one on MLIR
// 14's own runtime (parallel_for_bridge.c). hal-bench loads both into its
// process and calls _mlir_ciface_parallel_for_add of each in turn.
func @parallel_for_add(%a: memref<?x?xf32>, %b: memref<?x?xf32>,
                       %c: memref<?x?xf32>)
    attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32>
  %cols = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    %y = memref.load %b[%i, %j] : memref<?x?xf32>
    %sum = arith.addf %x, %y : f32
    memref.store %sum, %c[%i, %j] : memref<?x?xf32>
  }
  return
}
