/*
 * skiff-spawner: starts programs for the Skiff server, so that the server never forks itself.
 *
 *   skiff-spawner        (requests on stdin, replies on stdout)
 *
 * A fork of the server (a large Node.js process) costs milliseconds of its only thread, for every
 * container it starts; this small process does the fork and exec instead, while the server goes on.
 *
 * Request:  4-byte big-endian length, then NUL-terminated fields:
 *           id, cwd, argc, argv..., envc, env (KEY=VALUE)...
 *           argv[0] is run as given (a path: no PATH search), with exactly that environment, in cwd,
 *           with stdin, stdout and stderr on /dev/null, in the spawner's process group and session.
 * Replies (one line each):
 *           "S <id> <pid>"     the program runs (exec succeeded)
 *           "F <id> <errno>"   it could not be started (chdir or exec failed; nothing runs)
 *           "X <id> <status>"  it ended (waitpid's status)
 * When stdin closes (the server is gone) the spawner exits at once; what it started keeps running.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

struct child { pid_t pid; unsigned long id; };
static struct child *kids;
static size_t nkids, capkids;

static void reply(const char *line) {
  size_t len = strlen(line), off = 0;
  while (off < len) {
    ssize_t n = write(1, line + off, len - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      exit(0); /* the server is gone */
    }
    off += (size_t)n;
  }
}

static void remember(pid_t pid, unsigned long id) {
  if (nkids == capkids) {
    capkids = capkids ? capkids * 2 : 64;
    kids = realloc(kids, capkids * sizeof *kids);
    if (!kids) exit(1);
  }
  kids[nkids].pid = pid;
  kids[nkids].id = id;
  nkids++;
}

static void reap(void) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (size_t i = 0; i < nkids; i++) {
      if (kids[i].pid != pid) continue;
      char line[64];
      snprintf(line, sizeof line, "X %lu %d\n", kids[i].id, status);
      kids[i] = kids[--nkids];
      reply(line);
      break;
    }
  }
}

/* Fields of one request, pointing into buf (which the caller keeps until the spawn is done). */
static int spawn_one(char *buf, size_t len, const sigset_t *oldmask) {
  char *fields[4096 * 4];
  size_t nf = 0;
  for (size_t i = 0; i < len && nf < sizeof fields / sizeof *fields;) {
    fields[nf++] = buf + i;
    char *end = memchr(buf + i, '\0', len - i);
    if (!end) return -1;
    i = (size_t)(end - buf) + 1;
  }
  if (nf < 3) return -1;
  char *endp;
  unsigned long id = strtoul(fields[0], &endp, 10);
  const char *cwd = fields[1];
  size_t argc = strtoul(fields[2], &endp, 10);
  if (argc == 0 || 3 + argc >= nf) return -1;
  size_t envc = strtoul(fields[3 + argc], &endp, 10);
  if (4 + argc + envc != nf) return -1;
  char **argv = calloc(argc + 1, sizeof *argv);
  char **envp = calloc(envc + 1, sizeof *envp);
  if (!argv || !envp) exit(1);
  for (size_t i = 0; i < argc; i++) argv[i] = fields[3 + i];
  for (size_t i = 0; i < envc; i++) envp[i] = fields[4 + argc + i];

  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) < 0) exit(1);
  pid_t pid = fork();
  if (pid < 0) {
    char line[64];
    snprintf(line, sizeof line, "F %lu %d\n", id, errno);
    close(errpipe[0]);
    close(errpipe[1]);
    free(argv);
    free(envp);
    reply(line);
    return 0;
  }
  if (pid == 0) {
    close(errpipe[0]);
    /* as a fresh process: default signal handling, nothing blocked */
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
    }
    int err = 0;
    if (chdir(cwd) < 0) err = errno;
    else {
      execve(argv[0], argv, envp);
      err = errno;
    }
    if (write(errpipe[1], &err, sizeof err) < 0) { /* the parent reports it as started */ }
    _exit(127);
  }
  close(errpipe[1]);
  int err = 0;
  ssize_t n;
  do n = read(errpipe[0], &err, sizeof err); while (n < 0 && errno == EINTR);
  close(errpipe[0]);
  free(argv);
  free(envp);
  char line[64];
  if (n == (ssize_t)sizeof err) {
    /* it never ran: reap it here, so no "X" follows the "F" */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    snprintf(line, sizeof line, "F %lu %d\n", id, err);
  } else {
    remember(pid, id);
    snprintf(line, sizeof line, "S %lu %d\n", id, (int)pid);
  }
  reply(line);
  return 0;
}

int main(void) {
  sigset_t mask, oldmask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, &oldmask);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return 1;
  /* a server that stops reading must not kill us with SIGPIPE mid-reply; write() reports it */
  signal(SIGPIPE, SIG_IGN);

  size_t cap = 1 << 16, have = 0;
  char *buf = malloc(cap);
  if (!buf) return 1;
  for (;;) {
    struct pollfd p[2] = {{.fd = 0, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (p[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {}
      reap();
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (have == cap) {
        cap *= 2;
        buf = realloc(buf, cap);
        if (!buf) return 1;
      }
      ssize_t n = read(0, buf + have, cap - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 0; /* the server is gone: leave what runs running */
      have += (size_t)n;
      size_t off = 0;
      while (have - off >= 4) {
        uint32_t len = ((uint32_t)(unsigned char)buf[off] << 24) | ((uint32_t)(unsigned char)buf[off + 1] << 16) |
                       ((uint32_t)(unsigned char)buf[off + 2] << 8) | (uint32_t)(unsigned char)buf[off + 3];
        if (have - off - 4 < len) {
          if (len + 4 > cap) {
            while (len + 4 > cap) cap *= 2;
            memmove(buf, buf + off, have - off);
            have -= off;
            off = 0;
            buf = realloc(buf, cap);
            if (!buf) return 1;
          }
          break;
        }
        if (spawn_one(buf + off + 4, len, &oldmask) < 0) reply("E malformed request\n");
        off += 4 + len;
      }
      memmove(buf, buf + off, have - off);
      have -= off;
    }
  }
}
