/*
 * skiff-pyfork: runs `python3 ARGS...` as a child forked from a warm Python (python/skiff_zygote.py)
 * instead of a fresh interpreter, and behaves like that interpreter: same stdin/stdout/stderr (passed
 * over the socket), argv, environment and working directory; signals it receives are forwarded to
 * the child's process group; its exit status is the child's. If the zygote cannot be reached it
 * execs the real interpreter, so a task never depends on the zygote being up.
 *
 * usage: skiff-pyfork ARGS...      (environment: SKIFF_ZYGOTE=socket path, SKIFF_PYTHON=interpreter)
 *
 * native/skiff-shim.c includes this file (SKIFF_PYFORK_IN_SHIM: main is pyfork_main) and runs it in
 * its forked child, without an exec, when a container's command is this program: the same process,
 * arguments and environment, one exec a task fewer.
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
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int sigpipe_fds[2] = {-1, -1};

static void on_signal(int sig) {
  unsigned char b = (unsigned char)sig;
  int saved = errno;
  if (write(sigpipe_fds[1], &b, 1) < 0) { /* nothing to do */ }
  errno = saved;
}

static void fallback(char **args) {
  const char *py = getenv("SKIFF_PYTHON");
  if (!py || !*py) py = "python3";
  int n = 0;
  while (args[n]) n++;
  char **argv = calloc((size_t)n + 2, sizeof(char *));
  if (!argv) _exit(127);
  argv[0] = (char *)py;
  for (int i = 0; i < n; i++) argv[i + 1] = args[i];
  execvp(py, argv);
  fprintf(stderr, "skiff-pyfork: cannot run %s: %s\n", py, strerror(errno));
  _exit(127);
}

struct buf {
  char *data;
  size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->len + n + 1 > cap) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) _exit(127);
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len++] = '\0';
}

static void put_str(struct buf *b, const char *s) { put(b, s, strlen(s)); }

static void put_int(struct buf *b, long v) {
  char t[32];
  int n = snprintf(t, sizeof t, "%ld", v);
  put(b, t, (size_t)n);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

#ifdef SKIFF_PYFORK_IN_SHIM
static int pyfork_main(int argc, char **argv) {
#else
int main(int argc, char **argv) {
#endif
  char **args = argv + 1;
  const char *path = getenv("SKIFF_ZYGOTE");
  if (argc < 2 || !path || !*path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) fallback(args);

  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fallback(args);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strcpy(addr.sun_path, path);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
    close(fd);
    fallback(args);
  }

  struct buf b = {0};
  put_int(&b, argc - 1);
  for (int i = 1; i < argc; i++) put_str(&b, argv[i]);
  long envc = 0;
  for (char **e = environ; *e; e++) envc++;
  put_int(&b, envc);
  for (char **e = environ; *e; e++) put_str(&b, *e);
  char *cwd = getcwd(NULL, 0);
  put_str(&b, cwd ? cwd : "/");
  if (b.len > 0) b.len--; /* fields are separated, not terminated */

  unsigned char head[4] = {(unsigned char)(b.len >> 24), (unsigned char)(b.len >> 16), (unsigned char)(b.len >> 8), (unsigned char)b.len};
  int fds[3] = {0, 1, 2};
  char cbuf[CMSG_SPACE(sizeof fds)];
  memset(cbuf, 0, sizeof cbuf);
  struct iovec iov = {.iov_base = head, .iov_len = sizeof head};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t sent;
  do sent = sendmsg(fd, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent != (ssize_t)sizeof head) {
    close(fd);
    fallback(args);
  }
  signal(SIGPIPE, SIG_IGN);
  if (write_all(fd, b.data, b.len) < 0) {
    fprintf(stderr, "skiff-pyfork: the zygote went away\n");
    return 1;
  }
  unsigned char reply[5];
  if (read_all(fd, reply, 5) < 0 || reply[0] != 'P') {
    /* the zygote never forked: nothing ran yet, so the interpreter can still take over */
    close(fd);
    fallback(args);
  }

  if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) return 1;
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaction(forwarded[i], &sa, NULL);

  for (;;) {
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = sigpipe_fds[0], .events = POLLIN}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (p[1].revents & POLLIN) {
      unsigned char sig;
      while (read(sigpipe_fds[0], &sig, 1) == 1) {
        unsigned char k[5] = {'K', 0, 0, 0, sig};
        if (write_all(fd, (const char *)k, 5) < 0) break;
      }
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      unsigned char x[5];
      if (read_all(fd, x, 5) < 0 || x[0] != 'X') {
        fprintf(stderr, "skiff-pyfork: the zygote went away before the task ended\n");
        return 1;
      }
      uint32_t status = ((uint32_t)x[1] << 24) | ((uint32_t)x[2] << 16) | ((uint32_t)x[3] << 8) | x[4];
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        kill(getpid(), sig);
        return 128 + sig;
      }
      return 1;
    }
  }
}
