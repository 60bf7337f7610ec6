// Errors through awaits. A region whose assert fails sets its token or
// value to the error state; every region awaiting it (one await each: see
// docs/mlir-async.md on MLIR 14's over-release with several awaits) fails
// too; main observes the state with async.runtime.await + is_error, which
// must return (never hang) and report the error.
func @fail_chain(%n: index, %prev: !async.value<i64>) -> !async.value<i64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  cond_br %done, ^ret, ^more
^ret:
  return %prev : !async.value<i64>
^more:
  %t, %v = async.execute (%prev as %p: !async.value<i64>)
      -> !async.value<i64> {
    %one = arith.constant 1 : i64
    %s = arith.addi %p, %one : i64
    async.yield %s : i64
  }
  %m = arith.subi %n, %c1 : index
  %r = call @fail_chain(%m, %v)
      : (index, !async.value<i64>) -> !async.value<i64>
  return %r : !async.value<i64>
}

func @main() {
  %false = arith.constant false
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index

  // 1. A failing token awaited by another region, awaited by main.
  %t1 = async.execute {
    assert %false, "region 1 fails"
    async.yield
  }
  %t2 = async.execute {
    async.await %t1 : !async.token
    async.yield
  }
  async.runtime.await %t2 : !async.token
  %e2 = async.runtime.is_error %t2 : !async.token
  vector.print %e2 : i1
  // Awaiting an errored token a second time returns too.
  async.runtime.await %t1 : !async.token
  %e1 = async.runtime.is_error %t1 : !async.token
  vector.print %e1 : i1

  // 2. A failing value at the head of a chain of 100 value awaits.
  %tv, %v0 = async.execute -> !async.value<i64> {
    %x = arith.constant 7 : i64
    assert %false, "value fails"
    async.yield %x : i64
  }
  %last = call @fail_chain(%c100, %v0)
      : (index, !async.value<i64>) -> !async.value<i64>
  async.runtime.await %last : !async.value<i64>
  %ev = async.runtime.is_error %last : !async.value<i64>
  vector.print %ev : i1

  // 3. A healthy chain reports no error and the right value.
  %tok, %h0 = async.execute -> !async.value<i64> {
    %x = arith.constant 7 : i64
    assert %true, "never fails"
    async.yield %x : i64
  }
  %hlast = call @fail_chain(%c100, %h0)
      : (index, !async.value<i64>) -> !async.value<i64>
  %hv = async.await %hlast : !async.value<i64>
  vector.print %hv : i64

  // 4. A group of 8 where one member fails: await_all returns, the group
  //    is in error; a group without failures is not.
  %g = async.create_group %c8 : !async.group
  %ok_group = async.create_group %c8 : !async.group
  scf.for %i = %c0 to %c8 step %c1 {
    %is3 = arith.cmpi eq, %i, %c1 : index
    %ok = arith.xori %is3, %true : i1
    %t = async.execute {
      assert %ok, "member fails"
      async.yield
    }
    %r = async.add_to_group %t, %g : !async.token
    %t_ok = async.execute {
      async.yield
    }
    %r2 = async.add_to_group %t_ok, %ok_group : !async.token
  }
  async.runtime.await %g : !async.group
  %eg = async.runtime.is_error %g : !async.group
  vector.print %eg : i1
  async.runtime.await %ok_group : !async.group
  %eok = async.runtime.is_error %ok_group : !async.group
  vector.print %eok : i1

  // 5. A region awaiting the errored group inside a coroutine fails too.
  %t5 = async.execute {
    async.await_all %g
    async.yield
  }
  async.runtime.await %t5 : !async.token
  %e5 = async.runtime.is_error %t5 : !async.token
  vector.print %e5 : i1
  return
}
