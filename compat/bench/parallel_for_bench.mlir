// The parallel-for benchmark (hal-bench figure mlir_parallel_for_vs_mlir):
// C[i, j] = A[i, j] + B[i, j] over a 1024 x 1024 f32 matrix written as one
// scf.parallel, which -async-parallel-for (num-workers from the runtime)
// turns into async.execute blocks dispatched by recursive splitting. Each
// of 100 repetitions in one process prints its seconds (rtclock from
// libmlir_c_runner_utils); the last line is C[0, 0], which must be 2.
func private @rtclock() -> f64

func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %reps = arith.constant 100 : index
  %one = arith.constant 1.0 : f32
  %a = memref.alloc(%n, %n) : memref<?x?xf32>
  %b = memref.alloc(%n, %n) : memref<?x?xf32>
  %c = memref.alloc(%n, %n) : memref<?x?xf32>
  linalg.fill(%one, %a) : f32, memref<?x?xf32>
  linalg.fill(%one, %b) : f32, memref<?x?xf32>
  scf.for %r = %c0 to %reps step %c1 {
    %start = call @rtclock() : () -> f64
    scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = memref.load %b[%i, %j] : memref<?x?xf32>
      %sum = arith.addf %x, %y : f32
      memref.store %sum, %c[%i, %j] : memref<?x?xf32>
    }
    %end = call @rtclock() : () -> f64
    %seconds = arith.subf %end, %start : f64
    vector.print %seconds : f64
  }
  %first = memref.load %c[%c0, %c0] : memref<?x?xf32>
  vector.print %first : f32
  memref.dealloc %a : memref<?x?xf32>
  memref.dealloc %b : memref<?x?xf32>
  memref.dealloc %c : memref<?x?xf32>
  return
}
