// Egress capture (NetEgress): the init stage makes, inside the sandbox's
// network namespace and before the server exists, the raw sockets the
// supervisor needs there, and hands them over on EGRESS_FD (init.h). A
// socket belongs to the namespace it was made in, whoever uses it later, so
// the supervisor can configure the namespace (routes, over the netlink
// socket) and listen in it without entering it: an unprivileged supervisor
// could not, since setns into a network namespace needs CAP_SYS_ADMIN in the
// caller's own user namespace too (the kernel's netns_install; tried here:
// as an ordinary user, `nsenter --net` into the namespace of a child
// `unshare -Urn` fails with EPERM), and joining the child user namespace
// first, which makes it work, is refused to a multithreaded process such as
// a Go program (setns(2): EINVAL). One path serves root and user alike.
// Nothing here binds or configures: the supervisor, which owns the
// sandbox's user namespace, does that (sandbox/egress.go).

#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "init.h"

// egress_socket makes one socket or fails, saying which and why.
static int egress_socket(int domain, int type, int protocol, const char *what) {
	int fd = socket(domain, type | SOCK_CLOEXEC, protocol);
	if (fd >= 0)
		return fd;
	int err = errno;
	if (domain == AF_INET6 && err == EAFNOSUPPORT)
		init_fail("egress capture: %s: %s: this kernel has no IPv6 (ipv6.disable=1?): capture no IPv6 range", what, err_text(err));
	if (domain == AF_NETLINK)
		init_fail("egress capture: %s: %s: the kernel must offer rtnetlink to configure the server's network namespace", what, err_text(err));
	init_fail("egress capture: %s: %s", what, err_text(err));
}

void net_egress_handover(const struct init_config *c) {
	if (!c->egress.on)
		return;
	if (c->host_netns)
		init_fail("egress capture needs a network namespace of the sandbox's own, not the host's");
	int type = 0;
	socklen_t len = sizeof type;
	if (getsockopt(EGRESS_FD, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
		init_fail("egress capture: the supervisor passed no socket to hand the capture sockets over on (fd %d)", EGRESS_FD);
	size_t n = EGRESS_FIXED_FDS + (size_t)c->egress.tcp4 + (size_t)c->egress.tcp6;
	if (c->egress.tcp4 > EGRESS_MAX_FDS || c->egress.tcp6 > EGRESS_MAX_FDS || n > EGRESS_MAX_FDS)
		init_fail("egress capture: %u IPv4 and %u IPv6 listeners are more than one message carries (%d descriptors)",
			c->egress.tcp4, c->egress.tcp6, EGRESS_MAX_FDS);
	int fds[EGRESS_MAX_FDS];
	size_t k = 0;
	fds[k++] = egress_socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, "socket(AF_NETLINK, NETLINK_ROUTE)");
	fds[k++] = egress_socket(AF_INET, SOCK_DGRAM, 0, "the DNS stub's UDP socket");
	fds[k++] = egress_socket(AF_INET, SOCK_STREAM, 0, "the DNS stub's TCP socket");
	for (uint32_t i = 0; i < c->egress.tcp4; i++)
		fds[k++] = egress_socket(AF_INET, SOCK_STREAM, 0, "an IPv4 capture listener");
	for (uint32_t i = 0; i < c->egress.tcp6; i++)
		fds[k++] = egress_socket(AF_INET6, SOCK_STREAM, 0, "an IPv6 capture listener");

	uint32_t counts[2] = {c->egress.tcp4, c->egress.tcp6};
	struct iovec iov = {counts, sizeof counts};
	static char ctl[CMSG_SPACE(EGRESS_MAX_FDS * sizeof(int))];
	memset(ctl, 0, sizeof ctl);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = CMSG_SPACE(n * sizeof(int))};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	ssize_t sent;
	while ((sent = sendmsg(EGRESS_FD, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (sent != (ssize_t)sizeof counts)
		init_fail("egress capture: handing the sockets to the supervisor: %s", sent < 0 ? err_text(errno) : "short message");
	// The supervisor holds them now; none stays with the init stage or
	// reaches the server.
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	close(EGRESS_FD);
}
