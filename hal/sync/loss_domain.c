// Copyright 2026 The HAL Authors.
//
// hal_sync_loss_domain_t: what fails together when a device is lost (Q5,
// K14). See sync_queue.h for the contract.
//
// Membership costs nothing on the signal, wait and submit paths: a
// semaphore joins at creation and leaves in its destroy, a queue joins at
// creation and leaves at the start of its destroy. Only a loss walks the
// lists.
//
// Lock order: domain mutex -> queue mutex -> semaphore mutex -> pool
// mutexes. Under the domain lock a loss takes references (the member
// queues' parked submissions: a queue leaves the list under the lock before
// it is freed, so every listed queue is alive; and the member semaphores)
// and marks the member semaphores failed, holding back their callbacks.
// Everything that runs callbacks or may destroy a semaphore (which leaves
// the list under the same lock) happens after the lock is dropped (T2).

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_impl.h"

struct hal_sync_loss_domain_t {
  _Atomic intptr_t ref_count;
  hal_sync_mutex_t mutex;
  // The loss, set once (under |mutex|); member semaphores created after it
  // are born failed with a copy.
  hal_status_t failure;
  // Members (under |mutex|): intrusive doubly linked lists.
  hal_sync_domain_link_t* semaphores;
  hal_sync_domain_link_t* queues;
  hal_sync_domain_link_t* executors;  // host calls (host_call.c)
};

HAL_API hal_status_t
hal_sync_loss_domain_create(hal_sync_loss_domain_t** out_domain) {
  if (!out_domain) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_domain is NULL");
  }
  hal_sync_loss_domain_t* domain = calloc(1, sizeof(*domain));
  if (!domain) {
    *out_domain = NULL;
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "out of memory creating a loss domain");
  }
  atomic_init(&domain->ref_count, 1);
  hal_sync_mutex_initialize(&domain->mutex);
  *out_domain = domain;
  return HAL_OK;
}

static void hal_sync_loss_domain_retain(hal_sync_loss_domain_t* domain) {
  atomic_fetch_add_explicit(&domain->ref_count, 1, memory_order_relaxed);
}

HAL_API void hal_sync_loss_domain_release(hal_sync_loss_domain_t* domain) {
  if (!domain || atomic_fetch_sub_explicit(&domain->ref_count, 1,
                                           memory_order_acq_rel) != 1) {
    return;
  }
  assert(!domain->semaphores && !domain->queues && !domain->executors);
  hal_status_free(domain->failure);
  hal_sync_mutex_deinitialize(&domain->mutex);
  free(domain);
}

//===----------------------------------------------------------------------===//
// Membership
//===----------------------------------------------------------------------===//

#define HAL_SYNC_MEMBER_OF(link, type) \
  ((type*)((char*)(link)-offsetof(type, domain_link)))

// Under the domain lock.
static void hal_sync_domain_list_push(hal_sync_domain_link_t** head,
                                      hal_sync_domain_link_t* link) {
  link->prev = NULL;
  link->next = *head;
  if (*head)
    (*head)->prev = link;
  *head = link;
}

// Takes the member out of |*head| and drops its reference to |domain|.
static void hal_sync_domain_list_remove(hal_sync_loss_domain_t* domain,
                                        hal_sync_domain_link_t** head,
                                        hal_sync_domain_link_t* link) {
  hal_sync_mutex_lock(&domain->mutex);
  if (link->prev) {
    link->prev->next = link->next;
  } else {
    *head = link->next;
  }
  if (link->next)
    link->next->prev = link->prev;
  hal_sync_mutex_unlock(&domain->mutex);
  hal_sync_loss_domain_release(domain);
}

void hal_sync_loss_domain_add_semaphore(hal_sync_loss_domain_t* domain,
                                        hal_sync_semaphore_t* semaphore) {
  hal_sync_loss_domain_retain(domain);
  semaphore->domain = domain;
  hal_sync_mutex_lock(&domain->mutex);
  if (domain->failure) {
    // Born failed, before it is listed: a loss walking the list must find
    // it complete (its own failure then loses to this one, S2).
    semaphore->failure = hal_status_clone(domain->failure);
    atomic_store_explicit(&semaphore->value, HAL_SEMAPHORE_FAILURE_VALUE,
                          memory_order_relaxed);
  }
  hal_sync_domain_list_push(&domain->semaphores, &semaphore->domain_link);
  hal_sync_mutex_unlock(&domain->mutex);
}

void hal_sync_loss_domain_remove_semaphore(hal_sync_semaphore_t* semaphore) {
  hal_sync_loss_domain_t* domain = semaphore->domain;
  if (!domain)
    return;
  semaphore->domain = NULL;
  hal_sync_domain_list_remove(domain, &domain->semaphores,
                              &semaphore->domain_link);
}

void hal_sync_loss_domain_add_queue(hal_sync_loss_domain_t* domain,
                                    hal_sync_queue_t* queue) {
  hal_sync_loss_domain_retain(domain);
  queue->domain = domain;
  hal_sync_mutex_lock(&domain->mutex);
  if (domain->failure) {
    // On a device lost already: it takes no work (set before it is
    // listed, under the queue lock submit reads it with).
    hal_sync_mutex_lock(&queue->mutex);
    queue->loss = hal_status_clone(domain->failure);
    hal_sync_mutex_unlock(&queue->mutex);
  }
  hal_sync_domain_list_push(&domain->queues, &queue->domain_link);
  hal_sync_mutex_unlock(&domain->mutex);
}

void hal_sync_loss_domain_remove_queue(hal_sync_queue_t* queue) {
  hal_sync_loss_domain_t* domain = queue->domain;
  if (!domain)
    return;
  queue->domain = NULL;
  hal_sync_domain_list_remove(domain, &domain->queues, &queue->domain_link);
}

hal_status_t hal_sync_loss_domain_add_executor(hal_sync_loss_domain_t* domain,
                                               hal_sync_domain_link_t* link) {
  hal_sync_loss_domain_retain(domain);
  hal_sync_mutex_lock(&domain->mutex);
  hal_status_t loss =
      domain->failure ? hal_status_clone(domain->failure) : HAL_OK;
  hal_sync_domain_list_push(&domain->executors, link);
  hal_sync_mutex_unlock(&domain->mutex);
  return loss;
}

void hal_sync_loss_domain_remove_executor(hal_sync_loss_domain_t* domain,
                                          hal_sync_domain_link_t* link) {
  hal_sync_domain_list_remove(domain, &domain->executors, link);
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

HAL_API bool hal_sync_loss_domain_fail(hal_sync_loss_domain_t* domain,
                                       hal_status_t status) {
  if (!domain) {
    hal_status_free(status);
    return false;
  }
  if (status == HAL_OK) {
    status = hal_make_status(HAL_STATUS_DEVICE_LOST,
                             "device lost (no status given)");
  }
  hal_sync_mutex_lock(&domain->mutex);
  if (domain->failure) {
    // The first loss wins, like a semaphore's first failure (S2).
    hal_sync_mutex_unlock(&domain->mutex);
    hal_status_free(status);
    return false;
  }
  domain->failure = status;
  // Parked work of every member queue fails and the queues refuse more:
  // what it waits on may never come, and its signals must not wait for it.
  // A taken submission stays safe to fail after its queue is destroyed (it
  // is retired by then, and failing it touches only the submission).
  hal_sync_submission_list_t parked = {0};
  for (hal_sync_domain_link_t* link = domain->queues; link; link = link->next) {
    hal_sync_queue_take_parked(HAL_SYNC_MEMBER_OF(link, hal_sync_queue_t),
                               status, &parked);
  }
  // Member semaphores: taken with a reference (one being destroyed, at
  // count zero, is skipped: it has no waiter left to tell), failed below.
  size_t count = 0;
  for (hal_sync_domain_link_t* link = domain->semaphores; link;
       link = link->next) {
    ++count;
  }
  size_t executor_count = 0;
  for (hal_sync_domain_link_t* link = domain->executors; link;
       link = link->next) {
    ++executor_count;
  }
  hal_sync_semaphore_t** snapshot =
      count ? malloc(count * sizeof(*snapshot)) : NULL;
  struct hal_sync_host_executor_t** executors =
      executor_count ? malloc(executor_count * sizeof(*executors)) : NULL;
  if ((count && !snapshot) || (executor_count && !executors)) {
    fprintf(stderr,
            "hal/sync: out of memory failing a lost device's %zu "
            "semaphores and %zu host-call executors\n",
            count, executor_count);
    abort();
  }
  // Host-call executors: each takes the loss under the lock (no call is
  // accepted or started after it), and fails its waiting calls after.
  size_t executors_taken = 0;
  for (hal_sync_domain_link_t* link = domain->executors; link;
       link = link->next) {
    executors[executors_taken++] =
        hal_sync_host_executor_lose_locked(link, status);
  }
  // Member semaphores fail here, under the lock that made the loss known
  // (a refused submission, a semaphore born failed): whoever learns of the
  // loss, also through a callback or a failed host call, finds every one of
  // the device's semaphores failed. Their callbacks run after the unlock.
  hal_sync_failed_list_t resolved = {NULL, NULL};
  size_t taken = 0;
  for (hal_sync_domain_link_t* link = domain->semaphores; link;
       link = link->next) {
    hal_sync_semaphore_t* semaphore =
        HAL_SYNC_MEMBER_OF(link, hal_sync_semaphore_t);
    if (hal_resource_try_retain(&semaphore->base.resource)) {
      snapshot[taken++] = semaphore;
      hal_sync_semaphore_fail_deferred(semaphore, status, &resolved);
    }
  }
  hal_sync_mutex_unlock(&domain->mutex);
  // |status| is the domain's failure now: valid while the caller's
  // reference keeps the domain.
  hal_sync_failed_list_notify(&resolved, status);
  for (size_t i = 0; i < taken; ++i)
    hal_semaphore_release(&snapshot[i]->base);
  free(snapshot);
  // The loss, whatever they wait for (Q5): a failed wait does not come first.
  hal_sync_submission_list_fail(&parked, status, false);
  for (size_t i = 0; i < executors_taken; ++i)
    hal_sync_host_executor_fail_waiting(executors[i]);
  free(executors);
  return true;
}
