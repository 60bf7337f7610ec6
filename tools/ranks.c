// Copyright 2026 The HAL Authors.
//
// hal-run --ranks: the launcher and its workers (ranks.h).
//
// The launcher waits for its workers without polling: their stdout and
// stderr pipes and a pipe a SIGCHLD handler writes a byte into are polled
// together, so an exit or a line wakes it at once, and the bound is the
// poll's timeout. Every pipe is close-on-exec, so a worker holds none but
// its own two ends (as its fds 1 and 2), and a pipe's end of file means its
// worker and whatever it started are gone.

#include "ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_args.h"
#include "collectives.h"

// The launcher's bound on its workers when HAL_SYNC_MAX_WAIT_MS is unset.
#define RANKS_DEFAULT_BOUND_MS 300000u
// How long workers get to end after the launcher passed a termination
// signal on to them, before it kills them.
#define RANKS_STOP_GRACE_MS 10000u

// The environment hal-run hands its workers.
#define RANKS_ENV_RANK "HAL_RUN_RANK"
#define RANKS_ENV_RANKS "HAL_RUN_RANKS"
#define RANKS_ENV_CHANNEL_ID "HAL_RUN_CHANNEL_ID"
#define RANKS_ENV_KILL_RANK "HAL_RUN_KILL_RANK"
#define RANKS_ENV_EXIT_RANK "HAL_RUN_EXIT_RANK"

bool hal_ranks_is_worker(void) {
  return getenv(RANKS_ENV_RANK) != NULL;
}

// HAL_SYNC_MAX_WAIT_MS as a duration: 0 is no bound, unset the default.
static hal_status_t ranks_bound(hal_duration_t* out_ns, uint64_t* out_ms) {
  uint64_t ms = RANKS_DEFAULT_BOUND_MS;
  bool set = false;
  HAL_RETURN_IF_ERROR(
      hal_env_uint("HAL_SYNC_MAX_WAIT_MS", 0, 86400000, &ms, &set));
  *out_ms = ms;
  *out_ns = ms == 0 ? HAL_DURATION_INFINITE : (hal_duration_t)ms * 1000000;
  return HAL_OK;
}

static void ranks_id_format(const hal_channel_id_t* id,
                            char text[2 * HAL_CHANNEL_ID_SIZE + 1]) {
  static const char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < HAL_CHANNEL_ID_SIZE; ++i) {
    text[2 * i] = kDigits[id->bytes[i] >> 4];
    text[2 * i + 1] = kDigits[id->bytes[i] & 15];
  }
  text[2 * HAL_CHANNEL_ID_SIZE] = '\0';
}

static int ranks_hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static hal_status_t ranks_id_parse(const char* text, hal_channel_id_t* id) {
  size_t length = text ? strlen(text) : 0;
  if (length != 2 * HAL_CHANNEL_ID_SIZE) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           RANKS_ENV_CHANNEL_ID
                           ": expected %d hex digits (the channel id), got "
                           "%zu characters",
                           2 * HAL_CHANNEL_ID_SIZE, length);
  }
  for (size_t i = 0; i < 2 * HAL_CHANNEL_ID_SIZE; ++i) {
    if (ranks_hex_digit(text[i]) < 0) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             RANKS_ENV_CHANNEL_ID
                             ": character %zu ('%c') is not a hex digit",
                             i + 1, text[i]);
    }
  }
  for (size_t i = 0; i < HAL_CHANNEL_ID_SIZE; ++i) {
    id->bytes[i] = (uint8_t)(ranks_hex_digit(text[2 * i]) << 4 |
                             ranks_hex_digit(text[2 * i + 1]));
  }
  return HAL_OK;
}

void hal_ranks_print_failed(const char* driver_name,
                            const hal_ranks_options_t* options,
                            const char* how) {
  printf("collectives failed: driver=%s ranks=%" PRId32
         " devices-per-rank=%" PRId32 ": %s\n",
         driver_name, options->ranks, options->devices_per_rank, how);
}

static void ranks_print_ok(const char* driver_name,
                           const hal_ranks_options_t* options,
                           uint64_t bytes_verified, double all_reduce_ms) {
  int32_t global_ranks = options->ranks * options->devices_per_rank;
  uint64_t bytes = options->elements * 4;
  printf("collectives ok: driver=%s ranks=%" PRId32 " devices-per-rank=%" PRId32
         " elements=%" PRIu64 " verified=%" PRIu64
         " bytes all-reduce=%.3f ms algbw=%.3f GB/s busbw=%.3f GB/s (median "
         "host time)\n",
         driver_name, options->ranks, options->devices_per_rank,
         options->elements, bytes_verified, all_reduce_ms,
         hal_collectives_algbw(bytes, all_reduce_ms),
         hal_collectives_busbw(bytes, all_reduce_ms, global_ranks));
}

bool hal_ranks_parse_options(const char* ranks, const char* devices_per_rank,
                             const char* elements,
                             hal_ranks_options_t* out_options) {
  memset(out_options, 0, sizeof(*out_options));
  out_options->devices_per_rank = 1;
  out_options->elements = 1u << 20;
  uint64_t value = 0;
  if (!hal_cli_parse_uint(ranks, 1, HAL_COLLECTIVES_MAX_RANKS, &value)) {
    fprintf(stderr, "hal-run: --ranks=%s: expected an integer in [1, %d]\n",
            ranks, HAL_COLLECTIVES_MAX_RANKS);
    return false;
  }
  out_options->ranks = (int32_t)value;
  if (devices_per_rank) {
    if (!hal_cli_parse_uint(devices_per_rank, 1, HAL_COLLECTIVES_MAX_RANKS,
                            &value)) {
      fprintf(stderr,
              "hal-run: --devices-per-rank=%s: expected an integer in [1, "
              "%d]\n",
              devices_per_rank, HAL_COLLECTIVES_MAX_RANKS);
      return false;
    }
    out_options->devices_per_rank = (int32_t)value;
  }
  if (elements &&
      !hal_cli_parse_uint(elements, 1, 1u << 30, &out_options->elements)) {
    fprintf(stderr,
            "hal-run: --elements=%s: expected an integer in [1, 1073741824]\n",
            elements);
    return false;
  }
  int32_t global_ranks = out_options->ranks * out_options->devices_per_rank;
  if (global_ranks > HAL_COLLECTIVES_MAX_RANKS) {
    fprintf(stderr,
            "hal-run: --ranks=%" PRId32 " --devices-per-rank=%" PRId32
            " make %" PRId32 " global ranks; at most %d\n",
            out_options->ranks, out_options->devices_per_rank, global_ranks,
            HAL_COLLECTIVES_MAX_RANKS);
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The worker
//===----------------------------------------------------------------------===//

// Reads a HAL_RUN_* rank setting in [min, max] into |*out_value| (-1 when
// unset and not |required|).
static hal_status_t ranks_env_rank(const char* name, int32_t min, int32_t max,
                                   bool required, int32_t* out_value) {
  uint64_t value = 0;
  bool set = false;
  HAL_RETURN_IF_ERROR(
      hal_env_uint(name, (uint64_t)min, (uint64_t)max, &value, &set));
  if (!set && required) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "%s is not set, or empty (a worker needs " RANKS_ENV_RANK
        ", " RANKS_ENV_RANKS " and " RANKS_ENV_CHANNEL_ID ")",
        name);
  }
  *out_value = set ? (int32_t)value : -1;
  return HAL_OK;
}

// This worker's rank, the id and the kill and exit hooks, from the
// environment.
static hal_status_t ranks_worker_settings(const hal_ranks_options_t* options,
                                          hal_collectives_options_t* job,
                                          hal_channel_id_t* id) {
  int32_t ranks = 0;
  HAL_RETURN_IF_ERROR(ranks_env_rank(RANKS_ENV_RANKS, 1,
                                     HAL_COLLECTIVES_MAX_RANKS, true, &ranks));
  if (ranks != options->ranks) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           RANKS_ENV_RANKS "=%" PRId32 " but --ranks=%" PRId32
                                           ": a worker runs the launcher's job",
                           ranks, options->ranks);
  }
  HAL_RETURN_IF_ERROR(
      ranks_env_rank(RANKS_ENV_RANK, 0, ranks - 1, true, &job->rank));
  HAL_RETURN_IF_ERROR(ranks_id_parse(getenv(RANKS_ENV_CHANNEL_ID), id));
  int32_t kill_rank = -1;
  HAL_RETURN_IF_ERROR(
      ranks_env_rank(RANKS_ENV_KILL_RANK, 0, ranks - 1, false, &kill_rank));
  job->kill_after_join = kill_rank == job->rank;
  int32_t exit_rank = -1;
  HAL_RETURN_IF_ERROR(
      ranks_env_rank(RANKS_ENV_EXIT_RANK, 0, ranks - 1, false, &exit_rank));
  job->exit_after_submit = exit_rank == job->rank;
  return HAL_OK;
}

int hal_ranks_work(hal_driver_t* driver, const hal_ranks_options_t* options) {
  // A launcher that dies without passing a signal on (SIGKILL) takes its
  // workers with it; one already gone before this point leaves this
  // worker to init, and it stops.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) {
    fprintf(stderr, "hal-run: the launcher of this rank is gone\n");
    return 1;
  }
  // The launcher relays lines as they come: a worker that hangs has said
  // what it did before.
  setvbuf(stdout, NULL, _IOLBF, 0);
  hal_collectives_options_t job = {
      .ranks = options->ranks,
      .devices_per_rank = options->devices_per_rank,
      .elements = options->elements,
  };
  hal_channel_id_t id;
  uint64_t bound_ms = 0;
  hal_status_t status = ranks_worker_settings(options, &job, &id);
  if (!status)
    status = ranks_bound(&job.wait_ns, &bound_ms);
  if (status) {
    fprintf(stderr, "hal-run: ");
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    return 2;
  }
  hal_collectives_result_t result;
  status = hal_collectives_run(driver, &id, &job, &result);
  if (status) {
    fprintf(stderr, "hal-run: ");
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    return 1;
  }
  printf("done: verified=%" PRIu64 " bytes all-reduce=%.6f ms\n",
         result.bytes_verified, result.all_reduce_ms);
  return 0;
}

//===----------------------------------------------------------------------===//
// The launcher's workers
//===----------------------------------------------------------------------===//

// One of a worker's output pipes, relayed line by line.
typedef struct ranks_stream_t {
  int fd;        // the pipe's read end; -1 once at its end and closed
  FILE* target;  // where its lines go (the launcher's stdout or stderr)
  size_t length;
  char line[4096];
} ranks_stream_t;

typedef struct ranks_worker_t {
  int32_t rank;
  pid_t pid;
  bool running;  // started and not reaped
  int spawn_error;
  int wait_status;
  bool killed_by_launcher;
  ranks_stream_t streams[2];  // stdout, stderr
  // From its "done:" line.
  bool has_result;
  uint64_t bytes_verified;
  double all_reduce_ms;
} ranks_worker_t;

// The write end of the launcher's SIGCHLD pipe (-1 when none): the handler
// only writes a byte, which wakes the poll. Atomic, not only volatile: the
// handler may run on any thread (a queue thread of the launcher's device),
// at the moment the main thread restores the handlers and clears it.
static _Atomic int ranks_sigchld_fd = -1;

// A termination signal the launcher got while its workers ran (0: none):
// passed on to them, and raised again on the launcher once they are gone.
// Atomic for the same reason (lock-free, so safe in a handler).
static _Atomic int ranks_stop_signal = 0;

// The termination signals a launcher passes on, as torchrun and mpirun do.
static const int kRanksStopSignals[] = {SIGTERM, SIGINT, SIGHUP};

static void ranks_on_sigchld(int signal_number) {
  if (signal_number != SIGCHLD)
    atomic_store(&ranks_stop_signal, signal_number);
  int saved_errno = errno;
  char byte = 0;
  // Non-blocking: a full pipe already holds a wake-up.
  ssize_t written = write(atomic_load(&ranks_sigchld_fd), &byte, 1);
  (void)written;
  errno = saved_errno;
}

static void ranks_emit_line(ranks_worker_t* worker, ranks_stream_t* stream) {
  stream->line[stream->length] = '\0';
  fprintf(stream->target, "rank %" PRId32 ": %s\n", worker->rank, stream->line);
  if (stream->target == stdout) {
    uint64_t bytes = 0;
    double ms = 0;
    if (sscanf(stream->line,
               "done: verified=%" SCNu64 " bytes all-reduce=%lf ms", &bytes,
               &ms) == 2) {
      worker->has_result = true;
      worker->bytes_verified = bytes;
      worker->all_reduce_ms = ms;
    }
  }
  stream->length = 0;
}

static void ranks_stream_close(ranks_worker_t* worker, ranks_stream_t* stream) {
  if (stream->length)
    ranks_emit_line(worker, stream);  // a last line without its newline
  close(stream->fd);
  stream->fd = -1;
}

// Relays what |stream| has; closes it at its end. Returns whether it read
// anything.
static bool ranks_stream_read(ranks_worker_t* worker, ranks_stream_t* stream) {
  char chunk[4096];
  ssize_t got = read(stream->fd, chunk, sizeof(chunk));
  if (got < 0 && (errno == EINTR || errno == EAGAIN))
    return false;
  if (got <= 0) {
    ranks_stream_close(worker, stream);
    return false;
  }
  for (ssize_t i = 0; i < got; ++i) {
    if (chunk[i] == '\n') {
      ranks_emit_line(worker, stream);
      continue;
    }
    // A line longer than the buffer goes out in pieces, each prefixed.
    if (stream->length == sizeof(stream->line) - 1)
      ranks_emit_line(worker, stream);
    stream->line[stream->length++] = chunk[i];
  }
  fflush(stream->target);
  return true;
}

// Starts |worker|: /proc/self/exe with |argv| and |envp|, its stdout and
// stderr into pipes of the launcher's. Returns 0 or an errno value.
static int ranks_spawn(ranks_worker_t* worker, char* const argv[],
                       char* const envp[]) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0)
    return errno;
  if (pipe2(err, O_CLOEXEC) != 0) {
    int error = errno;
    close(out[0]);
    close(out[1]);
    return error;
  }
  posix_spawn_file_actions_t actions;
  int error = posix_spawn_file_actions_init(&actions);
  // dup2 leaves the new descriptors open across the exec (only the
  // originals are close-on-exec).
  if (!error)
    error = posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  if (!error)
    error = posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  if (!error)
    error =
        posix_spawn(&worker->pid, "/proc/self/exe", &actions, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (error) {
    close(out[0]);
    close(err[0]);
    return error;
  }
  worker->running = true;
  worker->streams[0] = (ranks_stream_t){.fd = out[0], .target = stdout};
  worker->streams[1] = (ranks_stream_t){.fd = err[0], .target = stderr};
  return 0;
}

// Reaps every worker that exited.
static void ranks_reap(ranks_worker_t* workers, int32_t count,
                       int32_t* inout_running) {
  for (int32_t i = 0; i < count; ++i) {
    ranks_worker_t* worker = &workers[i];
    if (!worker->running)
      continue;
    int wait_status = 0;
    pid_t reaped = waitpid(worker->pid, &wait_status, WNOHANG);
    if (reaped == worker->pid) {
      worker->running = false;
      worker->wait_status = wait_status;
      --*inout_running;
    }
  }
}

// Relays every worker's output until all exited and their pipes ended, or
// until |deadline|; then kills the workers left (saying so: past the bound
// of |bound_ms|, or at once when |start_failed|) and reaps them.
static void ranks_wait(const char* driver_name, ranks_worker_t* workers,
                       int32_t count, int sigchld_read_fd, hal_time_t deadline,
                       uint64_t bound_ms, bool start_failed) {
  struct pollfd fds[1 + 2 * HAL_COLLECTIVES_MAX_RANKS];
  ranks_stream_t* polled[2 * HAL_COLLECTIVES_MAX_RANKS];
  ranks_worker_t* owners[2 * HAL_COLLECTIVES_MAX_RANKS];
  int32_t running = 0;
  for (int32_t i = 0; i < count; ++i)
    running += workers[i].running;
  bool forwarded = false;  // a stop signal was passed on
  // A worker may have exited before the handler's first byte was read.
  ranks_reap(workers, count, &running);
  for (;;) {
    nfds_t n = 0;
    fds[n++] = (struct pollfd){.fd = sigchld_read_fd, .events = POLLIN};
    for (int32_t i = 0; i < count; ++i) {
      for (int s = 0; s < 2; ++s) {
        if (workers[i].streams[s].fd < 0)
          continue;
        polled[n - 1] = &workers[i].streams[s];
        owners[n - 1] = &workers[i];
        fds[n++] =
            (struct pollfd){.fd = workers[i].streams[s].fd, .events = POLLIN};
      }
    }
    if (running == 0 && n == 1)
      return;
    hal_time_t now = hal_time_now();
    if (now >= deadline)
      break;
    int timeout_ms = -1;
    if (deadline != HAL_TIME_INFINITE_FUTURE) {
      int64_t left_ms = (deadline - now + 999999) / 1000000;
      timeout_ms = left_ms > INT32_MAX ? INT32_MAX : (int)left_ms;
    }
    int ready = poll(fds, n, timeout_ms);
    if (ready < 0 && errno != EINTR) {
      fprintf(stderr, "hal-run: poll: %s\n", strerror(errno));
      break;
    }
    if (ready <= 0)
      continue;
    if (fds[0].revents) {
      char bytes[64];
      while (read(sigchld_read_fd, bytes, sizeof(bytes)) > 0) {
      }
      ranks_reap(workers, count, &running);
    }
    int stop_signal = atomic_load(&ranks_stop_signal);
    if (stop_signal && !forwarded && running > 0) {
      // Passed on to every worker still running; the ones that outlive
      // a grace period are killed like those past the bound.
      forwarded = true;
      fprintf(stderr,
              "hal-run: driver %s: got signal %d (%s): passing it to the "
              "%" PRId32 " rank(s) running\n",
              driver_name, stop_signal, strsignal(stop_signal), running);
      for (int32_t i = 0; i < count; ++i) {
        if (workers[i].running)
          kill(workers[i].pid, stop_signal);
      }
      hal_time_t grace = hal_time_add_saturated(
          hal_time_now(), (hal_duration_t)RANKS_STOP_GRACE_MS * 1000000);
      if (grace < deadline)
        deadline = grace;
    }
    for (nfds_t i = 1; i < n; ++i) {
      if (fds[i].revents)
        ranks_stream_read(owners[i - 1], polled[i - 1]);
    }
  }
  if (running > 0 && forwarded) {
    fprintf(stderr,
            "hal-run: driver %s: %" PRId32
            " rank(s) still running %u ms after the signal: killing",
            driver_name, running, RANKS_STOP_GRACE_MS);
  } else if (running > 0 && start_failed) {
    fprintf(stderr,
            "hal-run: driver %s: a rank could not start; killing the %" PRId32
            " started,",
            driver_name, running);
  } else if (running > 0) {
    fprintf(stderr,
            "hal-run: driver %s: %" PRId32
            " rank(s) still running after %" PRIu64
            " ms (the bound: HAL_SYNC_MAX_WAIT_MS, else %u ms): killing",
            driver_name, running, bound_ms, RANKS_DEFAULT_BOUND_MS);
  }
  if (running > 0) {
    const char* separator = " rank(s) ";
    for (int32_t i = 0; i < count; ++i) {
      if (!workers[i].running)
        continue;
      fprintf(stderr, "%s%" PRId32, separator, workers[i].rank);
      separator = ", ";
    }
    fprintf(stderr, "\n");
  }
  for (int32_t i = 0; i < count; ++i) {
    ranks_worker_t* worker = &workers[i];
    if (worker->running) {
      kill(worker->pid, SIGKILL);
      worker->killed_by_launcher = true;
      while (waitpid(worker->pid, &worker->wait_status, 0) < 0 &&
             errno == EINTR) {
      }
      worker->running = false;
    }
    // What is left in the pipes, without waiting for anyone still
    // holding them.
    for (int s = 0; s < 2; ++s) {
      ranks_stream_t* stream = &worker->streams[s];
      if (stream->fd < 0)
        continue;
      fcntl(stream->fd, F_SETFL, O_NONBLOCK);
      while (ranks_stream_read(worker, stream)) {
      }
      if (stream->fd >= 0)
        ranks_stream_close(worker, stream);
    }
  }
  fflush(stdout);
  fflush(stderr);
}

// Appends to |how| (of |capacity|) what went wrong with |worker|; returns
// whether anything did.
static bool ranks_describe(const ranks_worker_t* worker, char* how,
                           size_t capacity, uint64_t bound_ms,
                           bool start_failed) {
  size_t used = strlen(how);
  const char* separator = used ? "; " : "";
  char text[192];
  int status = worker->wait_status;
  if (worker->spawn_error) {
    snprintf(text, sizeof(text), "rank %" PRId32 " could not start: %s",
             worker->rank, strerror(worker->spawn_error));
  } else if (worker->killed_by_launcher && start_failed) {
    snprintf(text, sizeof(text),
             "rank %" PRId32 " killed by hal-run (a rank could not start)",
             worker->rank);
  } else if (worker->killed_by_launcher) {
    snprintf(text, sizeof(text),
             "rank %" PRId32 " still running after %" PRIu64
             " ms, killed by hal-run",
             worker->rank, bound_ms);
  } else if (WIFSIGNALED(status)) {
    snprintf(text, sizeof(text), "rank %" PRId32 " killed by signal %d (%s)",
             worker->rank, WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    snprintf(text, sizeof(text), "rank %" PRId32 " exited with status %d",
             worker->rank, WEXITSTATUS(status));
  } else if (!worker->has_result) {
    snprintf(text, sizeof(text),
             "rank %" PRId32 " exited with status 0 but said no result",
             worker->rank);
  } else {
    return false;
  }
  snprintf(how + used, capacity - used, "%s%s", separator, text);
  return true;
}

// The environment of worker processes: the launcher's, without any HAL_RUN_*
// setting of a job (a launcher started by a worker's environment gets its
// own) and with HAL_TRACE per rank; the rank's entries are written into the
// first free slots per rank (see ranks_launch_processes).
typedef struct ranks_env_t {
  char** entries;     // NULL-terminated
  size_t fixed;       // entries from the launcher's environment
  const char* trace;  // HAL_TRACE's value, or NULL
} ranks_env_t;

static bool ranks_env_is_replaced(const char* entry) {
  static const char* const kReplaced[] = {
      RANKS_ENV_RANK "=",
      RANKS_ENV_RANKS "=",
      RANKS_ENV_CHANNEL_ID "=",
      "HAL_TRACE=",
  };
  for (size_t i = 0; i < HAL_ARRAYSIZE(kReplaced); ++i) {
    if (strncmp(entry, kReplaced[i], strlen(kReplaced[i])) == 0)
      return true;
  }
  return false;
}

// Runs |options->ranks| workers on |driver_name| with |id|; true when every
// one succeeded, with the totals in |out_result|; |how| (of |capacity|)
// says which failed and how otherwise.
static bool ranks_launch_processes(const char* driver_name,
                                   const hal_ranks_options_t* options,
                                   const hal_channel_id_t* id,
                                   hal_collectives_result_t* out_result,
                                   char* how, size_t capacity) {
  memset(out_result, 0, sizeof(*out_result));
  how[0] = '\0';
  hal_duration_t bound_ns = 0;
  uint64_t bound_ms = 0;
  hal_status_t status = ranks_bound(&bound_ns, &bound_ms);
  if (status) {
    hal_status_format(status, how, capacity);
    hal_status_free(status);
    return false;
  }
  // The command line: the driver, the job, nothing else.
  char driver_arg[HAL_DRIVER_NAME_MAX + 16], ranks_arg[32], per_rank_arg[48],
      elements_arg[48];
  snprintf(driver_arg, sizeof(driver_arg), "--driver=%s", driver_name);
  snprintf(ranks_arg, sizeof(ranks_arg), "--ranks=%" PRId32, options->ranks);
  snprintf(per_rank_arg, sizeof(per_rank_arg), "--devices-per-rank=%" PRId32,
           options->devices_per_rank);
  snprintf(elements_arg, sizeof(elements_arg), "--elements=%" PRIu64,
           options->elements);
  char verbose_arg[] = "-v";
  char* argv[] = {(char*)options->argv0,
                  driver_arg,
                  ranks_arg,
                  per_rank_arg,
                  elements_arg,
                  options->verbose ? verbose_arg : NULL,
                  NULL};
  // The environment: the launcher's, with the rank's settings at the end.
  enum { kRankEntries = 4 };  // rank, ranks, id, trace
  size_t count = 0;
  while (environ[count])
    ++count;
  char** envp = calloc(count + kRankEntries + 1, sizeof(*envp));
  ranks_worker_t* workers = calloc((size_t)options->ranks, sizeof(*workers));
  char id_entry[sizeof(RANKS_ENV_CHANNEL_ID) + 2 * HAL_CHANNEL_ID_SIZE + 1];
  if (!envp || !workers) {
    free(envp);
    free(workers);
    snprintf(how, capacity, "out of memory starting the workers");
    return false;
  }
  for (int32_t r = 0; r < options->ranks; ++r) {
    workers[r].rank = r;
    workers[r].streams[0].fd = workers[r].streams[1].fd = -1;
  }
  const char* trace = getenv("HAL_TRACE");
  size_t fixed = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!ranks_env_is_replaced(environ[i]))
      envp[fixed++] = environ[i];
  }
  char id_text[2 * HAL_CHANNEL_ID_SIZE + 1];
  ranks_id_format(id, id_text);
  snprintf(id_entry, sizeof(id_entry), RANKS_ENV_CHANNEL_ID "=%s", id_text);
  char ranks_entry[48];
  snprintf(ranks_entry, sizeof(ranks_entry), RANKS_ENV_RANKS "=%" PRId32,
           options->ranks);

  // The SIGCHLD pipe, before the first worker can exit.
  int sigchld_pipe[2];
  if (pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    snprintf(how, capacity, "pipe: %s", strerror(errno));
    free(envp);
    free(workers);
    return false;
  }
  atomic_store(&ranks_sigchld_fd, sigchld_pipe[1]);
  struct sigaction action, previous;
  memset(&action, 0, sizeof(action));
  action.sa_handler = ranks_on_sigchld;
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&action.sa_mask);
  sigaction(SIGCHLD, &action, &previous);
  // A signal the launcher ignores (nohup's SIGHUP) stays ignored.
  struct sigaction previous_stop[HAL_ARRAYSIZE(kRanksStopSignals)];
  atomic_store(&ranks_stop_signal, 0);
  for (size_t i = 0; i < HAL_ARRAYSIZE(kRanksStopSignals); ++i) {
    sigaction(kRanksStopSignals[i], NULL, &previous_stop[i]);
    if (previous_stop[i].sa_handler != SIG_IGN)
      sigaction(kRanksStopSignals[i], &action, NULL);
  }

  hal_time_t deadline = hal_time_add_saturated(hal_time_now(), bound_ns);
  bool start_failed = false;
  for (int32_t r = 0; r < options->ranks; ++r) {
    ranks_worker_t* worker = &workers[r];
    char rank_entry[48];
    snprintf(rank_entry, sizeof(rank_entry), RANKS_ENV_RANK "=%" PRId32, r);
    // Each rank traces into a file of its own (one file per process):
    // FILE.rank<r>, or FILE.<driver>.rank<r> when drivers run in turn.
    size_t trace_size = trace ? strlen(trace) + strlen(driver_name) + 48 : 0;
    char* trace_entry = trace ? malloc(trace_size) : NULL;
    if (trace_entry && options->trace_per_driver) {
      snprintf(trace_entry, trace_size, "HAL_TRACE=%s.%s.rank%" PRId32, trace,
               driver_name, r);
    } else if (trace_entry) {
      snprintf(trace_entry, trace_size, "HAL_TRACE=%s.rank%" PRId32, trace, r);
    }
    size_t n = fixed;
    envp[n++] = rank_entry;
    envp[n++] = ranks_entry;
    envp[n++] = id_entry;
    if (trace_entry)
      envp[n++] = trace_entry;
    envp[n] = NULL;
    worker->spawn_error = ranks_spawn(worker, argv, envp);
    free(trace_entry);
    if (worker->spawn_error) {
      // The ones started would wait for it: end them now.
      start_failed = true;
      deadline = hal_time_now();
      break;
    }
  }
  ranks_wait(driver_name, workers, options->ranks, sigchld_pipe[0], deadline,
             bound_ms, start_failed);
  sigaction(SIGCHLD, &previous, NULL);
  for (size_t i = 0; i < HAL_ARRAYSIZE(kRanksStopSignals); ++i)
    sigaction(kRanksStopSignals[i], &previous_stop[i], NULL);
  atomic_store(&ranks_sigchld_fd, -1);
  int stop_signal = atomic_load(&ranks_stop_signal);
  if (stop_signal) {
    // Every worker is reaped: the launcher ends as the signal asked, with
    // its status (a shell sees 128 + the signal).
    fflush(stdout);
    fflush(stderr);
    raise(stop_signal);
  }
  close(sigchld_pipe[0]);
  close(sigchld_pipe[1]);

  bool ok = true;
  for (int32_t r = 0; r < options->ranks; ++r) {
    ranks_worker_t* worker = &workers[r];
    if (!worker->pid && !worker->spawn_error)
      continue;  // never tried: an earlier rank could not start
    if (ranks_describe(worker, how, capacity, bound_ms, start_failed)) {
      ok = false;
    } else {
      out_result->bytes_verified += worker->bytes_verified;
      if (worker->all_reduce_ms > out_result->all_reduce_ms)
        out_result->all_reduce_ms = worker->all_reduce_ms;
    }
  }
  free(envp);
  free(workers);
  return ok;
}

//===----------------------------------------------------------------------===//
// The launcher
//===----------------------------------------------------------------------===//

hal_ranks_outcome_t hal_ranks_launch(hal_driver_t* driver,
                                     const hal_ranks_options_t* options) {
  const char* driver_name = hal_driver_name(driver);
  hal_device_t* device = NULL;
  hal_channel_id_t id;
  int32_t kill_rank = -1;
  int32_t exit_rank = -1;
  hal_status_t status = ranks_env_rank(RANKS_ENV_KILL_RANK, 0,
                                       options->ranks - 1, false, &kill_rank);
  if (!status && kill_rank >= 0 && options->ranks == 1) {
    status = hal_make_status(HAL_STATUS_INVALID_ARGUMENT, RANKS_ENV_KILL_RANK
                             " kills a worker process; --ranks=1 runs in "
                             "hal-run's own process");
  }
  if (!status) {
    status = ranks_env_rank(RANKS_ENV_EXIT_RANK, 0, options->ranks - 1, false,
                            &exit_rank);
  }
  if (!status && exit_rank >= 0 && options->ranks == 1) {
    status = hal_make_status(HAL_STATUS_INVALID_ARGUMENT, RANKS_ENV_EXIT_RANK
                             " ends a worker process; --ranks=1 runs in "
                             "hal-run's own process");
  }
  if (!status) {
    status = hal_driver_create_device_by_index(driver, 0,
                                               hal_allocator_system(), &device);
  }
  if (!status)
    status = hal_channel_id_generate(device, &id);
  if (hal_status_code(status) == HAL_STATUS_UNIMPLEMENTED) {
    char reason[1024];
    hal_status_format(status, reason, sizeof(reason));
    printf("collectives skipped: driver=%s: %s\n", driver_name, reason);
    hal_status_free(status);
    hal_device_release(device);
    return HAL_RANKS_SKIPPED;
  }
  hal_collectives_result_t result;
  memset(&result, 0, sizeof(result));
  bool ok = false;
  char how[4096] = "";
  if (!status && options->ranks == 1) {
    hal_collectives_options_t job = {
        .rank = 0,
        .ranks = 1,
        .devices_per_rank = options->devices_per_rank,
        .elements = options->elements,
    };
    uint64_t bound_ms = 0;
    status = ranks_bound(&job.wait_ns, &bound_ms);
    if (!status)
      status = hal_collectives_run(driver, &id, &job, &result);
    ok = !status;
  } else if (!status) {
    // |device| stays open while the workers run: the library that made
    // the id serves the ranks' joins from this process.
    fflush(stdout);
    ok = ranks_launch_processes(driver_name, options, &id, &result, how,
                                sizeof(how));
  }
  hal_device_release(device);
  if (status) {
    fprintf(stderr, "hal-run: collectives failed on %s: ", driver_name);
    hal_status_fprint(stderr, status);
    hal_status_format(status, how, sizeof(how));
    hal_status_free(status);
  }
  if (!ok) {
    hal_ranks_print_failed(driver_name, options, how);
    return HAL_RANKS_FAILED;
  }
  ranks_print_ok(driver_name, options, result.bytes_verified,
                 result.all_reduce_ms);
  return HAL_RANKS_PASSED;
}
