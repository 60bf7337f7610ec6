// Fan-out: 1000 async.execute regions, each writing i*i into its own cell
// of a buffer, added to one group; main awaits the group and sums the
// cells. Then a group that is awaited from inside a coroutine.
func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  %zero = arith.constant 0 : i64
  %cells = memref.alloc(%n) : memref<?xi64>
  %group = async.create_group %n : !async.group
  scf.for %i = %c0 to %n step %c1 {
    %token = async.execute {
      %i64 = arith.index_cast %i : index to i64
      %sq = arith.muli %i64, %i64 : i64
      memref.store %sq, %cells[%i] : memref<?xi64>
      async.yield
    }
    %rank = async.add_to_group %token, %group : !async.token
  }
  async.await_all %group
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
    %x = memref.load %cells[%i] : memref<?xi64>
    %next = arith.addi %acc, %x : i64
    scf.yield %next : i64
  }
  vector.print %sum : i64

  // The same fan-out, awaited by a coroutine (await-all-and-execute),
  // which then sums; main awaits its value.
  %group2 = async.create_group %n : !async.group
  scf.for %i = %c0 to %n step %c1 {
    %token = async.execute {
      %i64 = arith.index_cast %i : index to i64
      %neg = arith.subi %zero, %i64 : i64
      memref.store %neg, %cells[%i] : memref<?xi64>
      async.yield
    }
    %rank = async.add_to_group %token, %group2 : !async.token
  }
  %t, %v = async.execute -> !async.value<i64> {
    async.await_all %group2
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
      %x = memref.load %cells[%i] : memref<?xi64>
      %next = arith.addi %acc, %x : i64
      scf.yield %next : i64
    }
    async.yield %s : i64
  }
  %sum2 = async.await %v : !async.value<i64>
  vector.print %sum2 : i64
  memref.dealloc %cells : memref<?xi64>
  return
}
