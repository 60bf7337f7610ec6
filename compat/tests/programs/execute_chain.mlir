// Chains of 1000 async.execute regions built by recursion (LLVM 14 cannot
// lower async values carried by loops or block arguments): a value chain,
// each region awaiting the previous value and adding its index, and a token
// chain whose regions check that they run in order.
func @value_chain(%n: index, %prev: !async.value<i64>) -> !async.value<i64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  cond_br %done, ^ret, ^more
^ret:
  return %prev : !async.value<i64>
^more:
  %t, %v = async.execute (%prev as %p: !async.value<i64>)
      -> !async.value<i64> {
    %i64 = arith.index_cast %n : index to i64
    %s = arith.addi %p, %i64 : i64
    async.yield %s : i64
  }
  %m = arith.subi %n, %c1 : index
  %r = call @value_chain(%m, %v)
      : (index, !async.value<i64>) -> !async.value<i64>
  return %r : !async.value<i64>
}

// Region k stores k into cell[0] after checking that cell[0] == k - 1;
// mismatches are counted in cell[1].
func @token_chain(%k: index, %n: index, %prev: !async.token,
                  %cell: memref<2xi64>) -> !async.token {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi ugt, %k, %n : index
  cond_br %done, ^ret, ^more
^ret:
  return %prev : !async.token
^more:
  %t = async.execute [%prev] {
    %zero = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %k64 = arith.index_cast %k : index to i64
    %old = memref.load %cell[%c0] : memref<2xi64>
    %want = arith.subi %k64, %one : i64
    %ok = arith.cmpi eq, %old, %want : i64
    %bad = select %ok, %zero, %one : i64
    %b = memref.load %cell[%c1] : memref<2xi64>
    %b2 = arith.addi %b, %bad : i64
    memref.store %b2, %cell[%c1] : memref<2xi64>
    memref.store %k64, %cell[%c0] : memref<2xi64>
    async.yield
  }
  %next = arith.addi %k, %c1 : index
  %r = call @token_chain(%next, %n, %t, %cell)
      : (index, index, !async.token, memref<2xi64>) -> !async.token
  return %r : !async.token
}

func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0 : i64
  %t0, %v0 = async.execute -> !async.value<i64> {
    async.yield %zero : i64
  }
  %last = call @value_chain(%c1000, %v0)
      : (index, !async.value<i64>) -> !async.value<i64>
  %sum = async.await %last : !async.value<i64>
  vector.print %sum : i64

  %cell = memref.alloc() : memref<2xi64>
  memref.store %zero, %cell[%c0] : memref<2xi64>
  memref.store %zero, %cell[%c1] : memref<2xi64>
  %first = async.execute {
    async.yield
  }
  %end = call @token_chain(%c1, %c1000, %first, %cell)
      : (index, index, !async.token, memref<2xi64>) -> !async.token
  async.await %end : !async.token
  %final = memref.load %cell[%c0] : memref<2xi64>
  %misordered = memref.load %cell[%c1] : memref<2xi64>
  vector.print %final : i64
  vector.print %misordered : i64
  memref.dealloc %cell : memref<2xi64>
  return
}
