/*
 * skiff-shim: a tiny per-container monitor, in the spirit of conmon.
 *
 *   skiff-shim [--spare-child] STATE_DIR LOG_FILE -- ARGV...
 *
 * It holds the container's stdout/stderr pipes and collects its exit status, so
 * the container keeps running (and logging) when the Skiff server crashes, and a
 * later server can adopt it from STATE_DIR: `claim` (made first, exclusively: a
 * shim that finds it there exits 125 without running anything), `pid` (written right after fork),
 * `exec-error` (why execvp failed; exit code 127), `exit` (one line of JSON).
 * LOG_FILE gets CRI-format lines: <RFC3339Nano> <stdout|stderr> <F|P> <content>
 *
 * --spare-child: forward signals to the container's process group except the
 * direct child (and its children).  For bubblewrap: bwrap has no handler for
 * SIGTERM and would die at once (killing the sandbox via --die-with-parent)
 * instead of letting the workload shut down and report its own exit status.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define SKIFF_PYFORK_IN_SHIM
#include "skiff-pyfork.c"

#define CHUNK 16384     /* longer lines are split into P entries, as the CRI runtimes do */
#define DRAIN_MS 2000   /* a grandchild holding the pipes open must not keep us alive */

struct stream { const char *name; int fd; size_t len; char buf[CHUNK]; };

static const char *state_dir;
static int log_fd = -1;
static pid_t child = -1;
static int spare_child;

static void rfc3339nano(char *out, size_t n, const struct timespec *ts) {
  struct tm tm;
  gmtime_r(&ts->tv_sec, &tm);
  snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec);
}

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Write STATE_DIR/name via a temp file + rename, so readers never see half a file. */
static void write_state(const char *name, const char *content) {
  char tmp[4096], dst[4096];
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp", state_dir, name);
  snprintf(dst, sizeof dst, "%s/%s", state_dir, name);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t r = write(fd, content, strlen(content));
  close(fd);
  if (r == (ssize_t)strlen(content)) rename(tmp, dst);
}

/* One CRI log entry.  A single writev on an O_APPEND fd keeps entries whole
 * and puts them in the file immediately (no stdio buffering). */
static void emit(struct stream *s, const char *data, size_t n, char tag) {
  char head[80];
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  rfc3339nano(head, sizeof head, &ts);
  size_t hl = strlen(head);
  hl += snprintf(head + hl, sizeof head - hl, " %s %c ", s->name, tag);
  struct iovec iov[3] = {{head, hl}, {(void *)data, n}, {"\n", 1}};
  /* Errors (disk full) are ignored: losing logs must not stop the container. */
  if (writev(log_fd, iov, 3) < 0) { /* nothing sensible to do */ }
}

/* Read what is available; write out every complete line, and a P chunk when
 * the buffer fills without a newline.  At EOF the remainder becomes a P chunk. */
static void pump(struct stream *s) {
  ssize_t r = read(s->fd, s->buf + s->len, CHUNK - s->len);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (r <= 0) { /* EOF: every writer has closed its end */
    if (s->len) emit(s, s->buf, s->len, 'P');
    s->len = 0;
    close(s->fd);
    s->fd = -1;
    return;
  }
  s->len += (size_t)r;
  size_t start = 0;
  char *nl;
  while ((nl = memchr(s->buf + start, '\n', s->len - start)) != NULL) {
    emit(s, s->buf + start, (size_t)(nl - (s->buf + start)), 'F');
    start = (size_t)(nl - s->buf) + 1;
  }
  memmove(s->buf, s->buf + start, s->len - start);
  s->len -= start;
  if (s->len == CHUNK) { emit(s, s->buf, s->len, 'P'); s->len = 0; }
}

static void forward(int sig) {
  if (!spare_child) { kill(-child, sig); return; }
  /* kill(-pgid) cannot exclude one member, so walk /proc for the group.  bwrap's own children
   * (the pid-1 reaper of the sandbox) are skipped too: pid 1 drops signals it has no handler for. */
  int hit = 0;
  DIR *d = opendir("/proc");
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    char path[300], buf[1024];
    pid_t pid = (pid_t)atoi(e->d_name);
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = pid > 0 && pid != child ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    char *p = strrchr(buf, ')'), state; /* the fields after the command name: state ppid pgrp */
    int ppid, pgrp;
    if (p && sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == child && ppid != child)
      hit += kill(pid, sig) == 0;
  }
  if (d) closedir(d);
  /* Nothing running inside yet: bwrap is still setting up, as pid 1 of the new namespace, which
   * only SIGKILL reaches from out here, and without --die-with-parent armed yet (killing just
   * the outer bwrap would leave it running).  A container not started yet is killed outright. */
  if (!hit) kill(-child, SIGKILL);
}

static void write_exit(int code, int sig, const struct timespec *finished) {
  char ts[64], json[256];
  rfc3339nano(ts, sizeof ts, finished);
  snprintf(json, sizeof json, "{\"exitCode\":%d,\"signal\":%d,\"finishedAt\":\"%s\"}\n", code, sig, ts);
  write_state("exit", json);
}

/* Setup failed before the container could start: report it like a failed exec. */
static void fail(const char *what) {
  char msg[4096];
  struct timespec now;
  snprintf(msg, sizeof msg, "skiff-shim: %s: %s\n", what, strerror(errno));
  write_state("exec-error", msg);
  clock_gettime(CLOCK_REALTIME, &now);
  write_exit(127, 0, &now);
  exit(1);
}

/* Whether `file` is the skiff-pyfork built beside this shim (the same file), whose code this
 * shim holds: then the child runs it without an exec. */
static int is_own_pyfork(const char *file) {
  const char *base = strrchr(file, '/');
  if (!base || strcmp(base + 1, "skiff-pyfork") != 0) return 0;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 0;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (!slash || (size_t)(slash - self) + sizeof "/skiff-pyfork" > sizeof self) return 0;
  strcpy(slash + 1, "skiff-pyfork");
  struct stat a, b;
  return stat(file, &a) == 0 && stat(self, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int main(int argc, char **argv) {
  int a = 1;
  if (a < argc && strcmp(argv[a], "--spare-child") == 0) { spare_child = 1; a++; }
  if (argc - a < 4 || strcmp(argv[a + 2], "--") != 0) {
    fprintf(stderr, "usage: skiff-shim [--spare-child] STATE_DIR LOG_FILE -- ARGV...\n");
    return 2;
  }
  state_dir = argv[a];
  const char *log_path = argv[a + 1];
  char **cargv = argv + a + 3;

  /* The run is this shim's only if it claims it first. A server that restarts and finds a run with
   * no record of a process (it died between asking for this shim and the shim's `pid`) claims the run
   * itself and starts the container again; a shim its predecessor asked for that only comes now must
   * not run the command a second time. */
  {
    char claim[4096], who[64];
    snprintf(claim, sizeof claim, "%s/claim", state_dir);
    int cfd = open(claim, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (cfd < 0) {
      fprintf(stderr, "skiff-shim: %s: %s\n", claim, strerror(errno));
      return 125;
    }
    int n = snprintf(who, sizeof who, "shim %d\n", (int)getpid());
    if (write(cfd, who, (size_t)n) != n) { /* the claim is the file itself; its text is for people */ }
    close(cfd);
  }

  /* A process group of our own, so the terminal's Ctrl-C to the server does not reach containers, but
   * not a session of our own: Linux's scheduler gives each session its own autogroup, and containers in
   * one autogroup with the server share the CPU as processes started from one shell do (torchrun's
   * ranks, for instance), where a session each made a 3-rank DDP job about 5% slower on 2 cores. */
  setpgid(0, 0);

  /* Take signals through a signalfd: no async handlers, no races with poll(). */
  sigset_t mask, oldmask;
  sigemptyset(&mask);
  int fwd[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++) sigaddset(&mask, fwd[i]);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, &oldmask);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) fail("signalfd");

  log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (log_fd < 0) fail("open log file");

  int outp[2], errp[2];
  if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) fail("pipe");

  child = fork();
  if (child < 0) fail("fork");
  if (child == 0) {
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, &oldmask, NULL); /* the mask survives exec: undo ours */
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(outp[1], 1);
    dup2(errp[1], 2);
    if (is_own_pyfork(cargv[0])) {
      /* what exec would have done: close the shim's own descriptors (all close-on-exec) */
      int own[] = {sfd, log_fd, outp[0], outp[1], errp[0], errp[1], devnull};
      for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) if (own[i] > 2) close(own[i]);
      prctl(PR_SET_NAME, "skiff-pyfork", 0, 0, 0);
      int cargc = 0;
      while (cargv[cargc]) cargc++;
      exit(pyfork_main(cargc, cargv));
    }
    execvp(cargv[0], cargv);
    char msg[4096];
    snprintf(msg, sizeof msg, "exec \"%s\": %s\n", cargv[0], strerror(errno));
    write_state("exec-error", msg);
    _exit(127);
  }
  /* Also from this side, so a signal forwarded right away finds the group. */
  setpgid(child, child);
  close(outp[1]);
  close(errp[1]);

  char pidbuf[32];
  snprintf(pidbuf, sizeof pidbuf, "%d\n", child);
  write_state("pid", pidbuf);

  static struct stream out = {"stdout", -1, 0, {0}}, err = {"stderr", -1, 0, {0}};
  out.fd = outp[0];
  err.fd = errp[0];

  int exited = 0, status = 0;
  long long deadline = 0;
  struct timespec finished = {0, 0};
  for (;;) {
    if (exited && out.fd < 0 && err.fd < 0) break;
    int timeout = -1;
    if (exited) {
      long long left = deadline - mono_ms();
      if (left <= 0) break;
      timeout = (int)left;
    }
    struct pollfd p[3] = {{sfd, POLLIN, 0}, {out.fd, POLLIN, 0}, {err.fd, POLLIN, 0}};
    if (poll(p, 3, timeout) < 0) {
      if (errno == EINTR) continue;
      break; /* cannot happen with valid fds; the wait below still holds */
    }
    if (p[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == sizeof si) {
        if ((int)si.ssi_signo != SIGCHLD) {
          forward((int)si.ssi_signo);
        } else if (!exited && waitpid(child, &status, WNOHANG) == child) {
          exited = 1;
          clock_gettime(CLOCK_REALTIME, &finished);
          deadline = mono_ms() + DRAIN_MS;
        }
      }
    }
    if (p[1].revents) pump(&out);
    if (p[2].revents) pump(&err);
  }
  if (!exited) { /* only if poll() itself failed: still never leave before the child */
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    clock_gettime(CLOCK_REALTIME, &finished);
  }
  /* Stopped draining early: keep what was read, as partial chunks. */
  if (out.len) emit(&out, out.buf, out.len, 'P');
  if (err.len) emit(&err, err.buf, err.len, 'P');

  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  write_exit(code, WIFSIGNALED(status) ? WTERMSIG(status) : 0, &finished);
  return 0;
}
