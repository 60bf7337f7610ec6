// Values of several types, a diamond of regions with several awaits each,
// and nested async.execute (a region that starts regions and awaits their
// values inside its coroutine). No vector-typed values: MLIR 14's runtime
// stores them 16-byte aligned and the JIT'd code's aligned 32-byte store
// crashes now and then (docs/mlir-async.md); ours aligns to 64.
func @main() {
  %ta, %a = async.execute -> !async.value<i32> {
    %x = arith.constant 40 : i32
    async.yield %x : i32
  }
  %tb, %b = async.execute -> !async.value<f64> {
    %x = arith.constant 2.5 : f64
    async.yield %x : f64
  }
  %tc, %c = async.execute -> !async.value<index> {
    %x = arith.constant 10 : index
    async.yield %x : index
  }
  // Diamond: d awaits a and b; e awaits a and c; f awaits d and e.
  %td, %d = async.execute (%a as %av: !async.value<i32>,
                           %b as %bv: !async.value<f64>)
      -> !async.value<f64> {
    %af = arith.sitofp %av : i32 to f64
    %s = arith.addf %af, %bv : f64
    async.yield %s : f64
  }
  %te, %e = async.execute (%a as %av: !async.value<i32>,
                           %c as %cv: !async.value<index>)
      -> !async.value<i64> {
    %a64 = arith.extsi %av : i32 to i64
    %sum = arith.index_cast %cv : index to i64
    %s = arith.addi %a64, %sum : i64
    async.yield %s : i64
  }
  %tf, %f = async.execute (%d as %dv: !async.value<f64>,
                           %e as %ev: !async.value<i64>)
      -> !async.value<f64> {
    %ef = arith.sitofp %ev : i64 to f64
    %s = arith.mulf %dv, %ef : f64
    async.yield %s : f64
  }
  %fv = async.await %f : !async.value<f64>
  vector.print %fv : f64
  %cv = async.await %c : !async.value<index>
  vector.print %cv : index

  // Nested: the outer region starts two inner ones and awaits both.
  %to, %o = async.execute -> !async.value<i64> {
    %t1, %v1 = async.execute -> !async.value<i64> {
      %x = arith.constant 1000 : i64
      async.yield %x : i64
    }
    %t2, %v2 = async.execute -> !async.value<i64> {
      %x = arith.constant 337 : i64
      async.yield %x : i64
    }
    %x1 = async.await %v1 : !async.value<i64>
    %x2 = async.await %v2 : !async.value<i64>
    %s = arith.addi %x1, %x2 : i64
    async.yield %s : i64
  }
  %ov = async.await %o : !async.value<i64>
  vector.print %ov : i64
  async.await %to : !async.token
  return
}
