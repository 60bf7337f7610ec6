// Copyright 2026 The HAL Authors.
//
// The shared segment of a communicator whose ranks are in several processes
// (ccl_shm.c): what ranks of one machine share so that the collectives
// engine (ccl.c) can meet across processes, as NCCL's intra-node transport
// does, with no socket.
//
// One POSIX shared memory object per communicator, named by a hash of its
// 128-byte unique id, is made by the first process to join and mapped once
// by every process with a rank in it. It holds:
//   - the join: each rank's state (absent, joined, left), its process id
//     and a token that tells processes apart; the name is unlinked once
//     every rank joined (or every process that mapped it gave up);
//   - a sticky failure (status and message) any process may set and every
//     process reads: an abort, ranks that disagree, a rank gone;
//   - a barrier between the processes (not the ranks: each process's proxy
//     thread arrives for all of its ranks), a descriptor per rank of its
//     current collective, and one staging slot per rank;
//   - per ordered pair of ranks, the send's and the receive's descriptors
//     and one staging slot handed over by two counters.
// One process-shared robust mutex guards every field but the data slots,
// which the protocol hands over (ccl.c); a futex word ("the bell") rings
// whenever any field changes, and waiters sleep on it with a bound, so a
// lost wake-up costs a nap, never a hang. A process that dies holding the
// mutex leaves it to the next locker (EOWNERDEAD), which fails the
// communicator: nothing it was doing can be trusted.

#ifndef VGPU_CORE_CCL_SHM_H_
#define VGPU_CORE_CCL_SHM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

typedef struct ccl_shm ccl_shm;

// snprintf into |out| (|size| bytes) for the engine's error messages; NULL
// or 0 bytes: nothing. Shared by ccl.c and ccl_shm.c.
void ccl_format(char* out, size_t size, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Opens (making it when this is the first process) the segment of |id| for
// |rank_count| ranks. VGPU_ERR_INVALID_VALUE when another process opened it
// with another rank count; VGPU_ERR_NOT_SUPPORTED when this system has no
// shared memory (the caller goes on with ranks of this process only).
// |error| gets the message.
vgpu_status ccl_shm_open(const uint8_t id[VGPU_CCL_ID_BYTES], int rank_count,
                         ccl_shm** out, char* error, size_t error_size);
// Unmaps |shm|. The name is unlinked once every rank joined; before that,
// by the last process to close it, or by one that closes it when every
// other rank that joined is in a process that no longer runs (one that
// died while joining). A process that dies joining alone leaves it, until
// the next ccl_shm_open of any process of the user removes every such
// name (all of its joined ranks in processes of this pid namespace that no
// longer run: a process runs while any of its threads does).
void ccl_shm_close(ccl_shm* shm);
// The segment's name for |id| ("/vgpu-ccl-<uid>-<hash>", |size| >= 64).
void ccl_shm_name(const uint8_t id[VGPU_CCL_ID_BYTES], char* out, size_t size);

// Rank |rank| joins (VGPU_ERR_INVALID_VALUE when a process joined it
// already), or gives up joining.
vgpu_status ccl_shm_join(ccl_shm* shm, int rank, char* error,
                         size_t error_size);
// false: too late to give up, every rank joined meanwhile.
bool ccl_shm_unjoin(ccl_shm* shm, int rank);
// Whether every rank joined; then, once, unlinks the name and learns which
// ranks are this process's (ccl_shm_is_local) and how many processes there
// are. |absent| (when not NULL and not complete): a mask of the ranks not
// joined.
bool ccl_shm_complete(ccl_shm* shm, uint64_t* absent);
bool ccl_shm_is_local(const ccl_shm* shm, int rank);
int ccl_shm_process_count(const ccl_shm* shm);
// Rank |rank| (this process's) left the communicator.
void ccl_shm_leave(ccl_shm* shm, int rank);

// Records the communicator's failure (the first one sticks) and rings.
void ccl_shm_fail(ccl_shm* shm, vgpu_status status, const char* message);
// The communicator's failure, if any: recorded, or found now (with
// |check_peers|): a process with ranks joined that no longer exists (then
// recorded).
vgpu_status ccl_shm_failure(ccl_shm* shm, bool check_peers, char* message,
                            size_t message_size);
// The first rank of |ranks| (a mask) that left, or -1. A rank leaves after
// its part of every call it made is done: a caller that sees it gone
// checks once more for that part before it calls it missing.
int ccl_shm_gone(ccl_shm* shm, uint64_t ranks);

// The bell: read it, then check state, then sleep while it still holds what
// was read (at most |timeout_ns|).
uint32_t ccl_shm_bell(const ccl_shm* shm);
void ccl_shm_ring(ccl_shm* shm);
void ccl_shm_sleep(ccl_shm* shm, uint32_t seen, uint64_t timeout_ns);

// The barrier between processes: arrive, then poll until it passed.
uint64_t ccl_shm_barrier_arrive(ccl_shm* shm);
bool ccl_shm_barrier_passed(ccl_shm* shm, uint64_t target);

// A rank's collective number |seq| (its call, buffers aside).
void ccl_shm_post(ccl_shm* shm, int rank, uint64_t seq,
                  const vgpu_ccl_call* call);
// Every rank's posted call for |seq| into calls[rank] (buffers NULL);
// false, with the ranks not posted in |missing|, when some are not.
bool ccl_shm_posted(ccl_shm* shm, uint64_t seq, vgpu_ccl_call* calls,
                    char* missing, size_t missing_size);
// Rank |rank|'s staging slot, of ccl_shm_slot_bytes bytes.
void* ccl_shm_slot(const ccl_shm* shm, int rank);
size_t ccl_shm_slot_bytes(const ccl_shm* shm);

// Send and receive number |seq| from |from| to |to|: each end posts its
// call; both read the pair once both are posted.
void ccl_shm_pair_post(ccl_shm* shm, int from, int to, bool send, uint64_t seq,
                       const vgpu_ccl_call* call);
bool ccl_shm_pair_posted(ccl_shm* shm, int from, int to, uint64_t seq,
                         vgpu_ccl_call* send, vgpu_ccl_call* recv);
// The pair's slot (ccl_shm_pair_bytes bytes) is the sender's to fill when
// empty, the receiver's to drain when full: put marks it full with |length|
// bytes, take marks it empty.
void* ccl_shm_pair_slot(const ccl_shm* shm, int from, int to);
size_t ccl_shm_pair_bytes(const ccl_shm* shm);
bool ccl_shm_pair_empty(ccl_shm* shm, int from, int to);
void ccl_shm_pair_put(ccl_shm* shm, int from, int to, size_t length);
bool ccl_shm_pair_full(ccl_shm* shm, int from, int to, size_t* length);
void ccl_shm_pair_take(ccl_shm* shm, int from, int to);

#endif  // VGPU_CORE_CCL_SHM_H_
