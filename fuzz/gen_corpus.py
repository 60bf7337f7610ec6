#!/usr/bin/env python3
"""Writes the seed corpus of hal-api-fuzz (fuzz/corpus/) and the inputs of
open findings (fuzz/regressions/).

usage: gen_corpus.py [OUTPUT_DIR]   (default: corpus/ and regressions/ beside
                                     this script; with a directory, the seeds
                                     only, there)

Each seed is a short program for the interpreter in api_fuzz.c: an opcode
byte, then the op's arguments in the order the op reads them (the comment
above each op_* function in api_fuzz.c). Opcodes are numbered by the
FUZZ_OPS list of api_fuzz.c, read from the source here, so the seeds follow
the table when ops are added. Re-run after changing an op's arguments.
"""
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_ops():
    source = open(os.path.join(HERE, "api_fuzz.c")).read()
    table = source[source.index("#define FUZZ_OPS(X)"):]
    table = table[:table.index("\n\n")]
    names = re.findall(r"X\((\w+),", table)
    return {name: index for index, name in enumerate(names)}


OPS = read_ops()


def u16(v):
    return list(struct.pack("<H", v))


def u32(v):
    return list(struct.pack("<I", v))


def u64(v):
    return list(struct.pack("<Q", v))


NULL = 0xFF  # a slot byte meaning an explicit NULL argument

# Semaphore values (take_semaphore_value).
SEEN = [0]
NEXT = [1]


def future(k):
    return [2, k]


PAST = [3]


def absolute(n):
    return [4, n]


MAX = [5, 0]


def failure_range(n=0):
    return [6, n]


def raw_value(v):
    return [7] + u64(v)


# Timeouts (take_timeout).
IMMEDIATE, ZERO, MS1, MS3, PAST_DEADLINE, DEADLINE_2MS = [0], [1], [2], [3], [4], [5]

# Ranges (take_range).
WHOLE = [0]


def from_offset(off):
    return [1] + u16(off)


def span(off, length):
    return [2] + u16(off) + u16(length)


def aligned(off, length):
    return [3] + u16(off) + u16(length)


AT_END = [4]


def past_end(n=0):
    return [5, n]


def overrun(off, k=0):
    return [6] + u16(off) + [k]


def raw_range(off, length):
    return [7] + u64(off) + u64(length)


def wrapping(a=0, b=0):
    return [8, a, b]


# Lists (take_list).
NULL_LIST = [0]


def null_arrays(n=1):
    return [1, n]


def entries(*pairs):
    out = [2 + len(pairs)]
    for slot, value in pairs:
        out += [slot] + value
    return out


EMPTY_LIST = entries()

# Memory types and usages: indexes into fuzz_memory_types / fuzz_usages.
DEVICE_LOCAL, HOST_VISIBLE, BOTH, NO_TYPE, BAD_TYPE = 0, 1, 2, 3, 4
DEFAULT, DEFAULT_MAPPING, TRANSFER, SOURCE_ONLY, TARGET_ONLY, DISPATCH_ONLY, \
    MAPPING_ONLY, NO_USAGE, BAD_USAGE = range(9)


def op(name, *args):
    out = [OPS[name]]
    for a in args:
        out += a if isinstance(a, list) else [a]
    return out


def sem_device(slot, value=None, null_out=0):
    return op("SEMAPHORE_CREATE_DEVICE", slot, value or absolute(0), null_out)


def sem_host(slot, value=None, allocator=0):
    return op("SEMAPHORE_CREATE_HOST", slot, value or absolute(0), allocator)


def signal(slot, value):
    return op("SEMAPHORE_SIGNAL", slot, value)


def wait(slot, value, timeout=MS1):
    return op("SEMAPHORE_WAIT", slot, value, timeout)


def query(slot, null_out=0):
    return op("SEMAPHORE_QUERY", slot, null_out)


def fail(slot, code=1):
    return op("SEMAPHORE_FAIL", slot, code)


def release_sem(slot):
    return op("SEMAPHORE_RELEASE", slot)


def list_wait(mode, lst, timeout=MS1, form=0):
    return op("LIST_WAIT", mode, lst, timeout, form)


NO_ACTION, SIGNAL_TARGET, FAIL_TARGET, RELEASE_LENT = range(4)


def callback(slot, value, form=1, tp=0, action=NO_ACTION, target=0, step=0):
    return op("CALLBACK_ADD", slot, value, form, tp, action, target, step)


def buffer(slot, memory=DEVICE_LOCAL, usage=DEFAULT, size=256, form=0):
    # Size class 1: 1 + (u16 % 4096) bytes.
    return op("BUFFER_ALLOCATE", slot, memory, usage, 1, u16(size - 1), form)


def buffer_size_class(slot, memory, usage, size_class, extra=(), form=0):
    return op("BUFFER_ALLOCATE", slot, memory, usage, size_class, list(extra),
              form)


def write(slot, rng, seed=7, null_host=0):
    return op("BUFFER_WRITE", slot, rng, seed, null_host)


def read(slot, rng, null_host=0):
    return op("BUFFER_READ", slot, rng, null_host)


def map_range(slot, access, rng, mapping=0, null_out=0):
    return op("BUFFER_MAP", slot, access, rng, mapping, null_out)


def mapping_access(mapping, at, count, seed=3):
    return op("MAPPING_ACCESS", mapping, u16(at), u16(count), seed)


def unmap(mapping, form=0):
    return op("BUFFER_UNMAP", mapping, form)


ONE_SHOT, REUSABLE, BAD_MODE, NULL_DEVICE_CB, NULL_OUT_CB = range(5)


def cb(slot, mode=ONE_SHOT):
    return op("COMMAND_BUFFER_CREATE", slot, mode)


def begin(slot):
    return op("COMMAND_BUFFER_BEGIN", slot)


def end(slot):
    return op("COMMAND_BUFFER_END", slot)


def barrier(slot):
    return op("COMMAND_BUFFER_BARRIER", slot)


# Pattern lengths: indexes into fuzz_pattern_lengths {1, 2, 4, 0, 3, 8}.
P1, P2, P4, P0, P3, P8 = range(6)


def fill(cbs, buf, plen, rng, pattern=0xA5A5A5A5, null_pattern=0):
    return op("COMMAND_BUFFER_FILL", cbs, buf, plen, rng, u32(pattern),
              null_pattern)


def update(cbs, buf, rng, source_offset=0, seed=9, form=0):
    return op("COMMAND_BUFFER_UPDATE", cbs, buf, rng, source_offset, seed,
              form)


def copy(cbs, src, dst, rng, target_selector=0, target_raw=0):
    return op("COMMAND_BUFFER_COPY", cbs, src, dst, rng, target_selector,
              u16(target_raw))


def dispatch(cbs, exe, entry, b0, r0, b1=0, r1=WHOLE, grid=0, count=1,
             size=32, constants=0, bindings=0, value=100):
    return op("COMMAND_BUFFER_DISPATCH", cbs, exe, entry, grid, count, size,
              constants, bindings, b0, r0, b1, r1, u32(value))


def info(cbs, null_out=0):
    return op("COMMAND_BUFFER_QUERY_INFO", cbs, null_out)


def executable(slot, form, raw=0):
    return op("EXECUTABLE_CREATE", slot, form, u32(raw))


def submit(queue=0, waits=EMPTY_LIST, signals=EMPTY_LIST, cbs=(), form=0,
           null_array=False):
    slots = list(cbs) + [0] * (3 - len(cbs))
    shape = 7 if null_array else len(cbs)
    return op("QUEUE_EXECUTE", queue, waits, signals, shape, slots, form)


def host_call(queue=0, waits=EMPTY_LIST, signals=EMPTY_LIST, form=0):
    return op("HOST_CALL", queue, waits, signals, form)


def wrong_kind(kind, slot, call):
    return op("WRONG_KIND", kind, slot, call)


def queue_alloca(queue=0, waits=EMPTY_LIST, signals=EMPTY_LIST, form=0,
                 size=4, slot=0):
    return op("QUEUE_ALLOCA", queue, waits, signals, form, size, slot)


SEMAPHORE_KIND, BUFFER_KIND, COMMAND_BUFFER_KIND = range(3)

FILL, UPDATE, COPY = range(3)


def verify(buf, kind, rng, pattern=0x11223344, plen=P4, source=0, queue=0):
    return op("DEVICE_OP_AND_VERIFY", buf, kind, rng, u32(pattern), plen,
              source, queue)


def device_query(form):
    return op("DEVICE_QUERY", form)


ALL, ANY, BAD_WAIT_MODE = 0, 1, 6

SEEDS = {
    # Semaphores on the host.
    "semaphore_signal_wait": sem_device(0) + signal(0, NEXT) + wait(0, SEEN) +
    query(0),
    "semaphore_host_counting": sem_host(0, absolute(3), 1) + signal(0, NEXT) +
    release_sem(0) + sem_host(1, absolute(1), 2),
    "semaphore_bad_values": sem_device(0, MAX) + signal(0, failure_range()) +
    signal(0, PAST) + sem_device(1, failure_range(1)) + sem_device(2, None, 1) +
    query(0, 1) + query(NULL),
    "semaphore_fail_sticky": sem_device(0) + fail(0, 13) + signal(0, NEXT) +
    fail(0, 1) + wait(0, SEEN) + query(0),
    "semaphore_wait_timeouts": sem_host(0) + wait(0, NEXT, IMMEDIATE) +
    wait(0, NEXT, MS3) + wait(0, future(2), PAST_DEADLINE) +
    wait(0, NEXT, DEADLINE_2MS) + wait(NULL, NEXT),
    "list_wait_all_any": sem_device(0) + sem_device(1, absolute(5)) +
    list_wait(ALL, entries((0, NEXT), (1, SEEN))) +
    list_wait(ANY, entries((0, NEXT), (1, SEEN))) + signal(0, NEXT) +
    list_wait(ALL, entries((0, SEEN), (1, SEEN), (0, SEEN)), MS1, 1),
    "list_wait_failed": sem_device(0) + sem_device(1) + fail(1, 4) +
    list_wait(ALL, entries((0, NEXT), (1, NEXT))) +
    list_wait(ANY, entries((0, NEXT), (1, NEXT)), MS1, 1),
    "list_wait_invalid": sem_device(0) + list_wait(BAD_WAIT_MODE, EMPTY_LIST) +
    list_wait(ALL, null_arrays(2)) + list_wait(ALL, entries((NULL, NEXT))) +
    list_wait(ANY, entries((0, failure_range()))) +
    list_wait(ALL, NULL_LIST, MS1, 1) + list_wait(ALL, EMPTY_LIST, MS1, 2),
    # Callbacks and timepoints.
    "callback_reached_and_pending": sem_device(0) + callback(0, SEEN, 0) +
    callback(0, NEXT, 1, 0) + signal(0, NEXT) + callback(0, future(1), 1, 1) +
    op("TIMEPOINT_CANCEL", 1, 0) + op("TIMEPOINT_CANCEL", 1, 0),
    "callback_destroyed_semaphore": sem_host(0) + callback(0, future(3), 1, 0) +
    release_sem(0) + op("TIMEPOINT_RELEASE", 0, 1) +
    op("TIMEPOINT_RELEASE", 0, 0),
    "callback_fail": sem_device(0) + callback(0, NEXT, 0) + fail(0, 2) +
    callback(0, NEXT, 1, 2) + callback(0, failure_range(), 0) +
    callback(NULL, NEXT, 0) + callback(0, NEXT, 2),
    "callback_release_lent": sem_host(0) + callback(0, NEXT, 0, 0, RELEASE_LENT) +
    callback(0, future(2), 1, 1) + signal(0, NEXT) + query(0) +
    sem_device(1) + callback(1, NEXT, 0, 0, RELEASE_LENT) + fail(1, 3) +
    sem_host(2) + callback(2, future(1), 1, 2, RELEASE_LENT) +
    op("TIMEPOINT_CANCEL", 2, 0) + op("TIMEPOINT_RELEASE", 2, 0),
    "callback_actions": sem_device(0) + sem_device(1) + sem_host(2) +
    callback(0, NEXT, 0, 0, SIGNAL_TARGET, 1, 0) +
    callback(1, NEXT, 0, 0, FAIL_TARGET, 2) +
    submit(0, entries((1, NEXT)), entries((2, NEXT)), form=1) +
    signal(0, NEXT) + wait(1, absolute(1), MS3) + wait(2, absolute(1), MS3) +
    callback(2, NEXT, 0, 0, SIGNAL_TARGET, 2),
    # Buffers.
    "buffer_write_read_device": buffer(0, DEVICE_LOCAL, DEFAULT, 256) +
    write(0, span(8, 64)) + read(0, span(0, 128)) + read(0, WHOLE),
    "buffer_write_read_host": buffer(0, HOST_VISIBLE, DEFAULT_MAPPING, 100) +
    write(0, span(0, 100), 3) + read(0, span(10, 90)),
    "buffer_bad_ranges": buffer(0, DEVICE_LOCAL, DEFAULT, 64) +
    write(0, past_end()) + write(0, overrun(10, 1)) + read(0, raw_range(1, 2**64 - 1)) +
    read(0, wrapping()) + write(0, WHOLE) + write(0, span(0, 4), 1, 1) +
    read(0, AT_END) + read(NULL, WHOLE),
    "buffer_allocate_invalid": buffer(0, NO_TYPE) + buffer(0, BAD_TYPE) +
    buffer(0, DEVICE_LOCAL, NO_USAGE) + buffer(0, DEVICE_LOCAL, BAD_USAGE) +
    buffer(0, DEVICE_LOCAL, MAPPING_ONLY) +
    buffer_size_class(0, DEVICE_LOCAL, DEFAULT, 4) +
    buffer_size_class(0, DEVICE_LOCAL, DEFAULT, 5, [0]) +
    buffer_size_class(0, DEVICE_LOCAL, DEFAULT, 6, [0]) +
    buffer(0, DEVICE_LOCAL, DEFAULT, 16, 2) + buffer(0, DEVICE_LOCAL, DEFAULT, 16, 3),
    "buffer_usage_limits": buffer(0, DEVICE_LOCAL, TARGET_ONLY, 32) +
    read(0, WHOLE) + write(0, WHOLE) + write(0, span(0, 32)) +
    buffer(1, DEVICE_LOCAL, SOURCE_ONLY, 32) + write(1, span(0, 32)),
    "buffer_map": buffer(0, HOST_VISIBLE, DEFAULT_MAPPING, 128) +
    map_range(0, 2, WHOLE, 0) + mapping_access(0, 0, 128, 5) +
    map_range(0, 0, span(16, 32), 1) + mapping_access(1, 0, 32) +
    unmap(0) + read(0, WHOLE) + unmap(1) + unmap(2, 1) + unmap(2, 2),
    "buffer_map_invalid": buffer(0, DEVICE_LOCAL, DEFAULT, 64) +
    map_range(0, 2, WHOLE) + buffer(1, HOST_VISIBLE, DEFAULT, 64) +
    map_range(1, 2, WHOLE) + buffer(2, HOST_VISIBLE, DEFAULT_MAPPING, 64) +
    map_range(2, 3, WHOLE) + map_range(2, 4, WHOLE) + map_range(2, 2, past_end()) +
    map_range(2, 2, AT_END) + map_range(2, 2, WHOLE, 0, 1),
    "buffer_release_while_mapped": buffer(0, HOST_VISIBLE, DEFAULT_MAPPING, 64) +
    map_range(0, 1, WHOLE) + op("BUFFER_RELEASE", 0) + mapping_access(0, 0, 64) +
    unmap(0),
    # Command buffers: the state machine.
    "command_buffer_states": cb(0) + end(0) + barrier(0) + begin(0) + begin(0) +
    barrier(0) + end(0) + end(0) + begin(0) + info(0) + info(0, 1) +
    cb(1, BAD_MODE) + cb(1, NULL_DEVICE_CB) + cb(1, NULL_OUT_CB) + begin(NULL),
    "command_buffer_reusable": cb(0, REUSABLE) + begin(0) + barrier(0) + end(0) +
    begin(0) + barrier(0) + barrier(0) + end(0) + submit(0, cbs=[0]) +
    begin(0) + submit(0, cbs=[0]),
    "command_buffer_fill_patterns": buffer(0, DEVICE_LOCAL, DEFAULT, 256) +
    cb(0) + begin(0) + fill(0, 0, P1, span(1, 7)) + fill(0, 0, P2, span(1, 8)) +
    fill(0, 0, P4, aligned(4, 64)) + fill(0, 0, P0, WHOLE) +
    fill(0, 0, P3, WHOLE) + fill(0, 0, P8, WHOLE) + fill(0, 0, P4, WHOLE, 1, 1) +
    fill(0, 0, P4, past_end()) + fill(0, NULL, P4, WHOLE) + end(0) +
    submit(0, cbs=[0]),
    "command_buffer_update": buffer(0, DEVICE_LOCAL, DEFAULT, 512) + cb(0) +
    begin(0) + update(0, 0, span(0, 100), 3) + update(0, 0, WHOLE) +
    update(0, 0, span(0, 10), 0, 1, 1) + update(0, 0, AT_END, 0, 1, 1) +
    update(0, 0, span(0, 1), 0, 0, 2) + update(0, 0, overrun(500)) + end(0),
    "command_buffer_update_limit": buffer_size_class(0, DEVICE_LOCAL, DEFAULT, 3) +
    cb(0) + begin(0) + update(0, 0, span(0, 0xFFFF), 0, 4) + end(0) +
    submit(0, cbs=[0]),
    "command_buffer_copy": buffer(0, DEVICE_LOCAL, DEFAULT, 128) +
    buffer(1, HOST_VISIBLE, DEFAULT_MAPPING, 128) + cb(0) + begin(0) +
    copy(0, 0, 1, WHOLE) + copy(0, 0, 0, span(0, 64), 1, 32) +
    copy(0, 0, 0, span(0, 64), 1, 64) + copy(0, 0, 1, from_offset(8), 2) +
    copy(0, 0, 1, span(0, 8), 3, 1) + copy(0, NULL, 1, WHOLE) + end(0) +
    submit(1, cbs=[0]),
    "command_buffer_usage_refused": buffer(0, DEVICE_LOCAL, SOURCE_ONLY, 64) +
    buffer(1, DEVICE_LOCAL, TARGET_ONLY, 64) + cb(0) + begin(0) +
    fill(0, 0, P4, WHOLE) + copy(0, 1, 0, WHOLE) + copy(0, 0, 1, WHOLE) + end(0),
    # Submissions.
    "submit_signal_wait": sem_device(0) + buffer(0, DEVICE_LOCAL, DEFAULT, 64) +
    cb(0) + begin(0) + fill(0, 0, P4, WHOLE) + end(0) +
    submit(0, signals=entries((0, NEXT)), cbs=[0]) + wait(0, absolute(1), MS3) +
    read(0, span(0, 64)),
    "submit_wait_before_signal": sem_device(0) + sem_device(1) + cb(0) +
    begin(0) + barrier(0) + end(0) +
    submit(0, entries((0, future(1))), entries((1, NEXT)), [0]) +
    signal(0, future(3)) + wait(1, absolute(1), MS3),
    "submit_failed_wait": sem_device(0) + sem_device(1) +
    submit(0, entries((0, NEXT)), entries((1, NEXT)), form=1) + fail(0, 10) +
    wait(1, absolute(1), MS3) + query(1),
    "submit_invalid": sem_device(0) + cb(0) + submit(0xF0) +
    submit(0, null_arrays(), EMPTY_LIST) + submit(0, EMPTY_LIST, entries((NULL, NEXT))) +
    submit(0, entries((0, failure_range())), EMPTY_LIST) +
    submit(0, EMPTY_LIST, entries((0, NEXT), (0, future(2)))) +
    submit(0, cbs=[0]) + submit(0, null_array=True) + submit(0, form=2) +
    submit(0, cbs=[NULL]),
    "submit_one_shot_twice": cb(0) + begin(0) + barrier(0) + end(0) +
    submit(0, cbs=[0, 0]) + submit(0, cbs=[0]) + submit(0, cbs=[0]),
    "submit_parked_then_released": sem_host(0) + sem_device(1) +
    buffer(0, DEVICE_LOCAL, DEFAULT, 64) + cb(0) + begin(0) + fill(0, 0, P1, WHOLE) +
    end(0) + submit(0, entries((0, future(2))), entries((1, NEXT)), [0]) +
    op("COMMAND_BUFFER_RELEASE", 0) + op("BUFFER_RELEASE", 0) + release_sem(0) +
    release_sem(1),
    "submit_cross_queue_chain": sem_device(0) + sem_device(1) + sem_device(2) +
    submit(0, entries((0, NEXT)), entries((1, NEXT)), form=1) +
    submit(1, entries((1, NEXT)), entries((2, NEXT)), form=1) +
    signal(0, NEXT) + list_wait(ALL, entries((2, absolute(1))), MS3, 1),
    "host_call_chain": sem_device(0) + sem_host(1) + sem_device(2) +
    host_call(1, entries((0, NEXT)), entries((1, NEXT))) +
    host_call(0, entries((1, NEXT)), entries((2, future(2)))) +
    signal(0, NEXT) + wait(2, absolute(2), MS3) + host_call(0) +
    host_call(0, entries((0, future(5))), entries((1, future(3)))),
    "host_call_invalid": sem_device(0) + host_call(0xF0) +
    host_call(0, null_arrays(), EMPTY_LIST) +
    host_call(0, EMPTY_LIST, entries((0, NEXT), (0, future(2)))) +
    host_call(0, form=1) + host_call(0, form=2) +
    host_call(0, entries((0, failure_range())), EMPTY_LIST),
    "queue_alloca": sem_device(0) + sem_device(1) +
    buffer(0, DEVICE_LOCAL, DEFAULT, 64) +
    queue_alloca(0, EMPTY_LIST, entries((0, NEXT))) +
    queue_alloca(1, entries((1, NEXT)), entries((0, future(2))), form=5) +
    queue_alloca(0, form=4, slot=0) + queue_alloca(0xF0) +
    queue_alloca(0, form=1) + queue_alloca(0, form=2) + queue_alloca(0, form=3) +
    queue_alloca(0, EMPTY_LIST, entries((1, NEXT), (1, future(2)))) +
    signal(1, NEXT) + wait(0, absolute(2), MS3),
    "wrong_kind": sem_device(0) + buffer(0, DEVICE_LOCAL, DEFAULT, 64) + cb(0) +
    wrong_kind(SEMAPHORE_KIND, 0, 0) + wrong_kind(SEMAPHORE_KIND, 0, 2) +
    wrong_kind(BUFFER_KIND, 0, 1) + wrong_kind(BUFFER_KIND, 0, 3) +
    wrong_kind(COMMAND_BUFFER_KIND, 0, 0) + wrong_kind(COMMAND_BUFFER_KIND, 0, 1) +
    begin(0) + wrong_kind(SEMAPHORE_KIND, 0, 2) + end(0),
    "submit_host_semaphore": sem_host(0) + sem_device(1) +
    submit(0, entries((1, NEXT)), entries((0, NEXT)), form=1) +
    signal(1, NEXT) + wait(0, absolute(1), MS3) + callback(0, NEXT, 1, 0),
    # Device work whose result is read back.
    "verify_fill": buffer(0, DEVICE_LOCAL, DEFAULT, 256) + write(0, WHOLE) +
    write(0, span(0, 256)) + verify(0, FILL, aligned(16, 64)) + read(0, span(0, 256)),
    "verify_update": buffer(0, HOST_VISIBLE, DEFAULT_MAPPING, 200) +
    verify(0, UPDATE, span(3, 50)) + map_range(0, 1, WHOLE) + read(0, span(0, 200)),
    "verify_copy": buffer(0, DEVICE_LOCAL, DEFAULT, 128) +
    buffer(1, DEVICE_LOCAL, DEFAULT, 128) + write(0, span(0, 128), 77) +
    verify(1, COPY, span(0, 128), 0, P4, 0) + read(1, span(0, 128)),
    # Dispatches and executables.
    "dispatch_fill_u32": buffer(0, DEVICE_LOCAL, DEFAULT, 256) + cb(0) +
    begin(0) + dispatch(0, 0, 0, 0, WHOLE, value=64) + barrier(0) +
    dispatch(0, 0, 3, 0, aligned(16, 64), value=8) + end(0) +
    sem_device(0) + submit(0, signals=entries((0, NEXT)), cbs=[0]) +
    wait(0, absolute(1), MS3),
    "dispatch_saxpy_iota": buffer(0, DEVICE_LOCAL, DEFAULT, 256) +
    buffer(1, DEVICE_LOCAL, DEFAULT, 256) + cb(0, REUSABLE) + begin(0) +
    dispatch(0, 0, 1, 0, WHOLE, 1, WHOLE, value=0x3F800000) +
    dispatch(0, 0, 2, 1, WHOLE, grid=1, value=3) + end(0) +
    submit(0, cbs=[0]) + submit(1, cbs=[0]),
    "dispatch_long_then_device_wait": sem_device(0) + sem_device(1) +
    buffer(0, DEVICE_LOCAL, DEFAULT, 4096) + cb(0) + begin(0) +
    dispatch(0, 0, 3, 0, WHOLE, grid=5, count=2, size=30, value=5) + end(0) +
    submit(0, signals=entries((0, NEXT)), cbs=[0]) + wait(1, NEXT, MS1) +
    submit(1, entries((0, absolute(1))), entries((1, NEXT)), form=1) +
    wait(1, absolute(1), MS3) + list_wait(ALL, entries((1, absolute(1))), MS3),
    "dispatch_invalid": buffer(0, DEVICE_LOCAL, DEFAULT, 64) +
    buffer(1, DEVICE_LOCAL, TRANSFER, 64) + cb(0) + begin(0) +
    dispatch(0, 0, 4, 0, WHOLE) + dispatch(0, NULL, 0, 0, WHOLE) +
    dispatch(0, 0, 0, 0, WHOLE, constants=1) + dispatch(0, 0, 0, 0, WHOLE, bindings=1) +
    dispatch(0, 0, 0, 0, WHOLE, constants=2) + dispatch(0, 0, 0, 0, WHOLE, bindings=2) +
    dispatch(0, 0, 0, 0, WHOLE, grid=2) + [0] + dispatch(0, 0, 0, 0, WHOLE, grid=3) +
    dispatch(0, 0, 0, 0, WHOLE, grid=4) + dispatch(0, 0, 0, 1, WHOLE) +
    dispatch(0, 0, 0, 0, past_end()) + end(0),
    "executable_create": executable(0, 0) + executable(1, 1) + executable(1, 2) +
    executable(1, 3) + executable(1, 4) + executable(1, 5) + executable(1, 6) +
    executable(1, 7) + executable(1, 8) + executable(1, 9, 100) +
    executable(1, 12) + executable(1, 13) + op("EXECUTABLE_RELEASE", 0),
    "executable_dispatch_release": executable(0, 0) +
    buffer(0, DEVICE_LOCAL, DEFAULT, 64) + cb(0) + begin(0) +
    dispatch(0, 1, 0, 0, WHOLE, value=16) + end(0) + op("EXECUTABLE_RELEASE", 0) +
    submit(0, cbs=[0]),
    # Device queries.
    "device_queries": device_query(0) + device_query(1) + device_query(2) +
    device_query(3),
}


# ELF header fields op_executable_create can overwrite: the top byte of its
# u32 argument picks one, the low 24 bits are the value.
E_PHOFF, E_SHOFF, E_PHNUM, E_SHENTSIZE, E_SHNUM = range(5)
CORRUPT_HEADER = 11  # op_executable_create's form


def corrupt_image(field, value):
    return executable(0, CORRUPT_HEADER, (field << 24) | value)


# Inputs the CI run does not replay (docs/fuzzing.md, "Findings"): those of
# a bug not fixed yet, which fail on purpose (once fixed, move the entry
# into SEEDS), and those that reproduce only in another build.
REGRESSIONS = {
    # Fixed. They stay here because they need a build without
    # -fsanitize=fuzzer-no-link (executables loaded per input) and
    # HAL_FUZZ_CORRUPT_IMAGES=1, which the CI run's build is not.
    "vgpu-elf-phoff-segv": corrupt_image(E_PHOFF, 0x191918),
    "vgpu-elf-phnum-overflow": corrupt_image(E_PHNUM, 0xFFFF),
}


def write_inputs(out, programs):
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.endswith(".bin"):
            os.remove(os.path.join(out, name))
    for name, program in programs.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(bytes(program))
    print(f"{len(programs)} inputs written to {out}")


def main(argv):
    write_inputs(argv[0] if argv else os.path.join(HERE, "corpus"), SEEDS)
    if not argv:
        write_inputs(os.path.join(HERE, "regressions"), REGRESSIONS)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
