// Issue 8 benchmark: 10,000 async.execute regions awaited through one
// group, repeated 20 times in one process; prints the seconds of each
// repetition (rtclock from libmlir_c_runner_utils).
func private @rtclock() -> f64

func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 10000 : index
  %reps = arith.constant 20 : index
  %cells = memref.alloc(%n) : memref<?xi64>
  scf.for %r = %c0 to %reps step %c1 {
    %start = call @rtclock() : () -> f64
    %group = async.create_group %n : !async.group
    scf.for %i = %c0 to %n step %c1 {
      %token = async.execute {
        %i64 = arith.index_cast %i : index to i64
        memref.store %i64, %cells[%i] : memref<?xi64>
        async.yield
      }
      %rank = async.add_to_group %token, %group : !async.token
    }
    async.await_all %group
    %end = call @rtclock() : () -> f64
    %seconds = arith.subf %end, %start : f64
    vector.print %seconds : f64
  }
  memref.dealloc %cells : memref<?xi64>
  return
}
