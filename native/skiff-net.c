// LD_PRELOAD library that gives a Pod its own slice of the host's network stack.
//
// Pods are plain processes sharing the host's network namespace; each has its own loopback address
// (SKIFF_POD_IP, 127.1.x.y). Servers that bind the wildcard address would collide across Pods (19
// replicas all binding 0.0.0.0:8080), so wildcard binds are narrowed to the Pod IP. And since
// containers of one Kubernetes Pod reach each other via localhost, a connect to 127.0.0.1:P where P
// is one of the Pod's declared ports (SKIFF_POD_PORTS) is sent to the Pod IP, where that server is.
// Other localhost ports stay the host's: a Pod may use services the host offers on 127.0.0.1.
//
// A Pod's view of the network interfaces (ioctl SIOCGIFCONF and the SIOCGIF* queries, as Open MPI
// and other cluster software enumerate them) is what a Kubernetes Pod has: `lo` with 127.0.0.1, and
// `eth0` with the Pod IP (/proc/net/if_inet6, where IPv6 addresses are listed, shows only `lo`).
// The host's own interfaces are hidden: a wildcard server in a Pod listens on
// the Pod IP only, so an address of the host's that a program advertised to its peers would not reach it.
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
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);
typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);

static bind_fn real_bind;
static connect_fn real_connect;
static sendto_fn real_sendto;
static sendmsg_fn real_sendmsg;
static ioctl_fn real_ioctl;
static fopen_fn real_fopen, real_fopen64;
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
  real_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
  real_fopen = (fopen_fn)dlsym(RTLD_NEXT, "fopen");
  real_fopen64 = (fopen_fn)dlsym(RTLD_NEXT, "fopen64");
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

// A Pod's address is new to it, but not to the host: an earlier Pod with the same address may have
// left connections in TIME_WAIT on the port a server here binds, which in a Pod of its own network
// namespace could not happen. So a narrowed server bind to a fixed port reuses the address (which on
// Linux still refuses a second listener).
static void reuse_addr(int fd) {
  int one = 1, saved = errno;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  errno = saved;
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
      if (in->sin_port && type == SOCK_STREAM) reuse_addr(fd);
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
      if (in6->sin6_port && type == SOCK_STREAM) reuse_addr(fd);
      if (real_bind(fd, (const struct sockaddr *)&a, sizeof a) == 0) return remember(fd);
      // A kernel or socket that refuses v4-mapped binds keeps the old (colliding) behaviour.
      if (errno != EADDRNOTAVAIL && errno != EINVAL) return -1;
    }
  }
  return real_bind(fd, addr, len);
}

// A connection from a Pod to a Pod address (its own or another's) comes from the Pod IP, as in a
// cluster: peers that tell others where to reach a process by the address its connection came from
// (XGBoost's and Gloo's trackers, MPI runtimes) then hand out an address that reaches it. Left alone,
// the kernel would pick 127.0.0.1, where nothing of the Pod listens. Only unbound IPv4 stream
// sockets, and dual-stack IPv6 ones connecting to a v4-mapped address (gRPC's C core opens those:
// Katib's report_metrics() reaches Skiff so); the port is still chosen at connect time.
static void pod_source(int fd, const struct sockaddr *dst, socklen_t len) {
  if (!dst || len < sizeof(struct sockaddr_in)) return;
  int v6 = dst->sa_family == AF_INET6;
  in_addr_t d;
  if (dst->sa_family == AF_INET) {
    d = ntohl(((const struct sockaddr_in *)dst)->sin_addr.s_addr);
  } else if (v6 && len >= sizeof(struct sockaddr_in6) && IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)dst)->sin6_addr)) {
    struct in_addr v4;
    memcpy(&v4, &((const struct sockaddr_in6 *)dst)->sin6_addr.s6_addr[12], 4);
    d = ntohl(v4.s_addr);
  } else {
    return;
  }
  if ((d >> 24) != 127 || d == INADDR_LOOPBACK) return;
  int saved = errno;
  struct sockaddr_storage cur;
  socklen_t n = sizeof cur;
  if (sock_int(fd, SOL_SOCKET, SO_TYPE) == SOCK_STREAM && getsockname(fd, (struct sockaddr *)&cur, &n) == 0) {
    int one = 1;
    if (!v6 && cur.ss_family == AF_INET && ((struct sockaddr_in *)&cur)->sin_port == 0 && ((struct sockaddr_in *)&cur)->sin_addr.s_addr == htonl(INADDR_ANY)) {
      setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
      struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = 0, .sin_addr = pod_ip };
      real_bind(fd, (const struct sockaddr *)&src, sizeof src); // best effort: the connect goes on either way
    } else if (v6 && cur.ss_family == AF_INET6 && ((struct sockaddr_in6 *)&cur)->sin6_port == 0 &&
               IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&cur)->sin6_addr) && sock_int(fd, IPPROTO_IPV6, IPV6_V6ONLY) == 0) {
      setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
      struct sockaddr_in6 src = { .sin6_family = AF_INET6, .sin6_port = 0 };
      mapped_pod_ip(&src.sin6_addr);
      real_bind(fd, (const struct sockaddr *)&src, sizeof src);
    }
  }
  errno = saved;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  struct sockaddr_storage a;
  socklen_t n = redirect(fd, addr, len, &a);
  if (!real_connect) return errno = ENOSYS, -1;
  if (active && real_bind) pod_source(fd, n ? (const struct sockaddr *)&a : addr, n ? n : len);
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

// --- interfaces -----------------------------------------------------------------------------------

#define POD_IF "eth0"
#define POD_IF_INDEX 1000 // not a real interface: an index no host interface is likely to have

static void set_in(struct sockaddr *sa, in_addr_t addr_be) {
  struct sockaddr_in *in = (struct sockaddr_in *)sa;
  memset(in, 0, sizeof *in);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = addr_be;
}

// SIOCGIFCONF: the host's loopback entries, then the Pod's eth0. Keeps the kernel's contract: with a
// null buffer ifc_len says how much room the whole list needs, otherwise as many entries as fit are
// written and ifc_len says how many bytes.
static int ifconf_view(int fd, struct ifconf *ifc) {
  struct ifreq host[64];
  struct ifconf all = { .ifc_len = sizeof host, .ifc_req = host };
  if (real_ioctl(fd, SIOCGIFCONF, &all) != 0) return -1;
  struct ifreq view[65];
  int n = 0;
  for (size_t i = 0; i < (size_t)all.ifc_len / sizeof(struct ifreq); i++) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)&host[i].ifr_addr;
    if (in->sin_family == AF_INET && (ntohl(in->sin_addr.s_addr) >> 24) == 127) view[n++] = host[i];
  }
  memset(&view[n], 0, sizeof view[n]);
  strncpy(view[n].ifr_name, POD_IF, IFNAMSIZ - 1);
  set_in(&view[n].ifr_addr, pod_ip.s_addr);
  n++;
  int need = n * (int)sizeof(struct ifreq);
  if (!ifc->ifc_buf) {
    ifc->ifc_len = need;
    return 0;
  }
  int fit = ifc->ifc_len < need ? ifc->ifc_len / (int)sizeof(struct ifreq) : n;
  memcpy(ifc->ifc_buf, view, (size_t)fit * sizeof(struct ifreq));
  ifc->ifc_len = fit * (int)sizeof(struct ifreq);
  return 0;
}

// The SIOCGIF* queries about the Pod's eth0; 1 if answered.
static int pod_if(unsigned long req, struct ifreq *r) {
  switch (req) {
  case SIOCGIFADDR: set_in(&r->ifr_addr, pod_ip.s_addr); return 1;
  case SIOCGIFNETMASK: set_in(&r->ifr_netmask, htonl(0xffff0000u)); return 1;
  case SIOCGIFBRDADDR: set_in(&r->ifr_broadaddr, pod_ip.s_addr | htonl(0x0000ffffu)); return 1;
  case SIOCGIFFLAGS: r->ifr_flags = IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_MULTICAST; return 1;
  case SIOCGIFMTU: r->ifr_mtu = 65536; return 1;
  case SIOCGIFINDEX: r->ifr_ifindex = POD_IF_INDEX; return 1;
  case SIOCGIFHWADDR:
    memset(&r->ifr_hwaddr, 0, sizeof r->ifr_hwaddr);
    r->ifr_hwaddr.sa_family = 1; // ARPHRD_ETHER
    r->ifr_hwaddr.sa_data[0] = 0x02; // locally administered, derived from the Pod IP
    memcpy(&r->ifr_hwaddr.sa_data[2], &pod_ip, 4);
    return 1;
  }
  return 0;
}

int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  int on = ready();
  if (!real_ioctl) return errno = ENOSYS, -1;
  if (!on || !arg) return real_ioctl(fd, req, arg);
  if (req == SIOCGIFCONF) return ifconf_view(fd, (struct ifconf *)arg);
  if (req == SIOCGIFNAME) {
    struct ifreq *r = (struct ifreq *)arg;
    if (r->ifr_ifindex == POD_IF_INDEX) {
      strncpy(r->ifr_name, POD_IF, IFNAMSIZ);
      return 0;
    }
  } else if (req >= SIOCGIFNAME && req <= SIOCGIFINDEX) {
    struct ifreq *r = (struct ifreq *)arg;
    if (strncmp(r->ifr_name, POD_IF, IFNAMSIZ) == 0 && pod_if(req, r)) return 0;
  }
  return real_ioctl(fd, req, arg);
}

// /proc/net/if_inet6 with only the loopback lines: the Pod has no IPv6 address of its own, and the
// host's would put its interface names (often eth0 too) next to the Pod's.
static FILE *if_inet6_view(fopen_fn real, const char *mode) {
  FILE *in = real("/proc/net/if_inet6", "r");
  if (!in) return NULL;
  int fd = memfd_create("if_inet6", MFD_CLOEXEC);
  if (fd < 0) return in;
  char line[256];
  while (fgets(line, sizeof line, in)) {
    size_t n = strlen(line);
    size_t end = n;
    while (end > 0 && (line[end - 1] == '\n' || line[end - 1] == ' ')) end--;
    if (end >= 3 && line[end - 3] == ' ' && line[end - 2] == 'l' && line[end - 1] == 'o') {
      if (write(fd, line, n) != (ssize_t)n) break;
    }
  }
  fclose(in);
  lseek(fd, 0, SEEK_SET);
  FILE *out = fdopen(fd, mode);
  if (!out) close(fd);
  return out;
}

static int is_if_inet6(const char *path, const char *mode) {
  return path && mode && mode[0] == 'r' && mode[1] != '+' &&
         (strcmp(path, "/proc/net/if_inet6") == 0 || strcmp(path, "/proc/self/net/if_inet6") == 0);
}

FILE *fopen(const char *path, const char *mode) {
  int on = ready();
  if (!real_fopen) return errno = ENOSYS, NULL;
  if (on && is_if_inet6(path, mode)) return if_inet6_view(real_fopen, mode);
  return real_fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode) {
  int on = ready();
  fopen_fn real = real_fopen64 ? real_fopen64 : real_fopen;
  if (!real) return errno = ENOSYS, NULL;
  if (on && is_if_inet6(path, mode)) return if_inet6_view(real, mode);
  return real(path, mode);
}
