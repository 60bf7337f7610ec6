// Nested fan-out: 32 regions, each starting 32 inner regions in a group of
// its own and awaiting that group inside its coroutine before writing the
// inner results' sum; main awaits the outer group. 1056 regions in all.
// Starts row |i| of inner regions, in a group of its own (a loop with
// async ops cannot sit inside a coroutine in LLVM 14, so it lives here).
func @inner_fanout(%i: index, %n: index, %cells: memref<?xi64>)
    -> !async.group {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %inner = async.create_group %n : !async.group
  scf.for %j = %c0 to %n step %c1 {
    %tj = async.execute {
      %row = arith.muli %i, %n : index
      %k = arith.addi %row, %j : index
      %k64 = arith.index_cast %k : index to i64
      memref.store %k64, %cells[%k] : memref<?xi64>
      async.yield
    }
    %r = async.add_to_group %tj, %inner : !async.token
  }
  return %inner : !async.group
}

func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 32 : index
  %zero = arith.constant 0 : i64
  %total = arith.muli %n, %n : index
  %cells = memref.alloc(%total) : memref<?xi64>
  %sums = memref.alloc(%n) : memref<?xi64>
  %outer = async.create_group %n : !async.group
  scf.for %i = %c0 to %n step %c1 {
    %t = async.execute {
      %inner = call @inner_fanout(%i, %n, %cells)
          : (index, index, memref<?xi64>) -> !async.group
      async.await_all %inner
      %row = arith.muli %i, %n : index
      %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
        %k = arith.addi %row, %j : index
        %x = memref.load %cells[%k] : memref<?xi64>
        %next = arith.addi %acc, %x : i64
        scf.yield %next : i64
      }
      memref.store %s, %sums[%i] : memref<?xi64>
      async.yield
    }
    %r = async.add_to_group %t, %outer : !async.token
  }
  async.await_all %outer
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
    %x = memref.load %sums[%i] : memref<?xi64>
    %next = arith.addi %acc, %x : i64
    scf.yield %next : i64
  }
  vector.print %sum : i64
  %s3 = memref.load %sums[%c1] : memref<?xi64>
  vector.print %s3 : i64
  memref.dealloc %cells : memref<?xi64>
  memref.dealloc %sums : memref<?xi64>
  return
}
