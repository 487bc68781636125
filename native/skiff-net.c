// LD_PRELOAD library that gives a Pod its own slice of the host's network stack.
//
// Pods are plain processes sharing the host's network namespace; each has its own loopback address
// (SKIFF_POD_IP, 127.1.x.y). Servers that bind the wildcard address would collide across Pods (19
// replicas all binding 0.0.0.0:8080), so wildcard binds are narrowed to the Pod IP. And since
// containers of one Kubernetes Pod reach each other via localhost, a connect to 127.0.0.1:P where P
// is one of the Pod's declared ports (SKIFF_POD_PORTS) is sent to the Pod IP, where that server is.
// Other localhost ports stay the host's: a Pod may use services the host offers on 127.0.0.1.
//
// Only dynamically linked programs that call libc's bind/connect are covered: static binaries and
// Go programs (raw syscalls) are not. Nothing is ever printed: this runs inside arbitrary programs.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);
typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);

static bind_fn real_bind;
static connect_fn real_connect;
static sendto_fn real_sendto;
static sendmsg_fn real_sendmsg;
static int active;                  // SKIFF_POD_IP is set and valid
static struct in_addr pod_ip;       // network byte order
static uint8_t declared[65536 / 8]; // bitmap of SKIFF_POD_PORTS, host byte order
// Ports this process narrowed itself count as declared for its own connects: a program that serves
// on ("", 0) and then talks to localhost:<that port> (tests, torch's TCPStore) must still reach itself.
static uint8_t narrowed[65536 / 8];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  int saved = errno; // dlsym/getenv must not leak an errno into the caller's call
  real_bind = (bind_fn)dlsym(RTLD_NEXT, "bind");
  real_connect = (connect_fn)dlsym(RTLD_NEXT, "connect");
  real_sendto = (sendto_fn)dlsym(RTLD_NEXT, "sendto");
  real_sendmsg = (sendmsg_fn)dlsym(RTLD_NEXT, "sendmsg");
  const char *ip = getenv("SKIFF_POD_IP");
  active = ip && inet_pton(AF_INET, ip, &pod_ip) == 1 && pod_ip.s_addr != htonl(INADDR_ANY);
  const char *p = getenv("SKIFF_POD_PORTS");
  while (p && *p) { // hand-rolled: strtol would accept signs and spaces we don't want to guess at
    unsigned long port = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && port <= 65535; p++, digits++) port = port * 10 + (unsigned long)(*p - '0');
    if (digits && port > 0 && port <= 65535) declared[port / 8] |= (uint8_t)(1u << (port % 8));
    while (*p && *p != ',') p++; // skip junk up to the next entry
    if (*p) p++;
  }
  errno = saved;
}

static inline int ready(void) {
  pthread_once(&once, init);
  return active;
}

static inline int is_declared(in_port_t port_be) {
  unsigned port = ntohs(port_be);
  return ((declared[port / 8] | __atomic_load_n(&narrowed[port / 8], __ATOMIC_RELAXED)) >> (port % 8)) & 1;
}

// Called after a narrowed bind succeeded (so errno is the caller's); returns the bind's result, 0.
static int remember(int fd) {
  struct sockaddr_storage a;
  socklen_t n = sizeof a;
  int saved = errno;
  if (getsockname(fd, (struct sockaddr *)&a, &n) == 0) { // the port the kernel picked for port 0
    unsigned port = ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port : ((struct sockaddr_in *)&a)->sin_port);
    __atomic_fetch_or(&narrowed[port / 8], (uint8_t)(1u << (port % 8)), __ATOMIC_RELAXED);
  }
  errno = saved;
  return 0;
}

static int sock_int(int fd, int level, int name) {
  int v = 0, saved = errno;
  socklen_t n = sizeof v;
  if (getsockopt(fd, level, name, &v, &n) != 0) v = -1;
  errno = saved;
  return v;
}

static void mapped_pod_ip(struct in6_addr *a) {
  memset(a, 0, sizeof *a);
  a->s6_addr[10] = a->s6_addr[11] = 0xff;
  memcpy(&a->s6_addr[12], &pod_ip, 4);
}

// "This Pod's localhost": 127.0.0.1 or 0.0.0.0 (Linux connects the latter to 127.0.0.1), plain or
// v4-mapped, and ::1 / ::. Only these: the rest of 127/8 holds other Pods' addresses.
static int is_local4(const struct in_addr *a) {
  return a->s_addr == htonl(INADDR_LOOPBACK) || a->s_addr == htonl(INADDR_ANY);
}
static int is_local6(const struct in6_addr *a) {
  if (IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a)) return 1;
  return IN6_IS_ADDR_V4MAPPED(a) && is_local4((const struct in_addr *)&a->s6_addr[12]);
}

// Destination rewrite shared by connect/sendto/sendmsg: fills *out and returns its length, or 0 to
// leave the call alone. Costs two compares for the common non-local destination.
static socklen_t redirect(int fd, const struct sockaddr *addr, socklen_t len, struct sockaddr_storage *out) {
  // Length first: with msg_namelen 0 the kernel ignores msg_name, which may then point anywhere.
  if (!ready() || !addr || len < sizeof(struct sockaddr_in)) return 0;
  if (addr->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
    if (!is_local4(&in->sin_addr) || !is_declared(in->sin_port)) return 0;
    struct sockaddr_in *o = (struct sockaddr_in *)out;
    *o = *in;
    o->sin_addr = pod_ip;
    return sizeof *o;
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
    if (!is_local6(&in6->sin6_addr) || !is_declared(in6->sin6_port)) return 0;
    if (sock_int(fd, IPPROTO_IPV6, IPV6_V6ONLY) != 0) return 0; // can't reach a v4 address
    struct sockaddr_in6 *o = (struct sockaddr_in6 *)out;
    *o = *in6;
    mapped_pod_ip(&o->sin6_addr);
    o->sin6_scope_id = 0;
    return sizeof *o;
  }
  return 0;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
  int on = ready();
  if (!real_bind) return errno = ENOSYS, -1;
  if (!on || !addr || len < sizeof(struct sockaddr_in)) return real_bind(fd, addr, len);
  if (addr->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
    int type;
    // An ephemeral UDP wildcard bind is a client's (libuv binds 0.0.0.0:0 before its first send);
    // a socket bound to a loopback address cannot send off the host (EINVAL), so leave it alone.
    if (in->sin_addr.s_addr == htonl(INADDR_ANY) &&
        ((type = sock_int(fd, SOL_SOCKET, SO_TYPE)) == SOCK_STREAM || (type == SOCK_DGRAM && in->sin_port))) {
      struct sockaddr_in a = *in;
      a.sin_addr = pod_ip;
      return real_bind(fd, (const struct sockaddr *)&a, sizeof a) == 0 ? remember(fd) : -1;
    }
  } else if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
    int type;
    if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) && sock_int(fd, IPPROTO_IPV6, IPV6_V6ONLY) == 0 &&
        ((type = sock_int(fd, SOL_SOCKET, SO_TYPE)) == SOCK_STREAM || (type == SOCK_DGRAM && in6->sin6_port))) {
      struct sockaddr_in6 a = *in6;
      mapped_pod_ip(&a.sin6_addr);
      a.sin6_scope_id = 0;
      if (real_bind(fd, (const struct sockaddr *)&a, sizeof a) == 0) return remember(fd);
      // A kernel or socket that refuses v4-mapped binds keeps the old (colliding) behaviour.
      if (errno != EADDRNOTAVAIL && errno != EINVAL) return -1;
    }
  }
  return real_bind(fd, addr, len);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  struct sockaddr_storage a;
  socklen_t n = redirect(fd, addr, len, &a);
  if (!real_connect) return errno = ENOSYS, -1;
  return n ? real_connect(fd, (const struct sockaddr *)&a, n) : real_connect(fd, addr, len);
}

ssize_t sendto(int fd, const void *buf, size_t size, int flags, const struct sockaddr *addr, socklen_t len) {
  struct sockaddr_storage a;
  socklen_t n = redirect(fd, addr, len, &a);
  if (!real_sendto) return errno = ENOSYS, -1;
  return n ? real_sendto(fd, buf, size, flags, (const struct sockaddr *)&a, n) : real_sendto(fd, buf, size, flags, addr, len);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
  struct sockaddr_storage a;
  socklen_t n = msg ? redirect(fd, (const struct sockaddr *)msg->msg_name, msg->msg_namelen, &a) : 0;
  if (!real_sendmsg) return errno = ENOSYS, -1;
  if (!n) return real_sendmsg(fd, msg, flags);
  struct msghdr m = *msg;
  m.msg_name = &a;
  m.msg_namelen = n;
  return real_sendmsg(fd, &m, flags);
}
