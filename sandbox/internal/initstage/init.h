// The init stage, in C: PID 1 of a sandbox's namespaces. It builds the
// root, starts the server and stays as its reaper. It runs from the ELF
// constructor (zygote.c) and never starts the Go runtime, so a sandbox costs
// no second Go start-up and no Go heap in its PID 1.
//
// Shared between the C files of the init stage and the package's Go side,
// which reads the constants below through cgo instead of copying them.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/capability.h>

// The configuration arrives on fd 3 as two messages, each a little-endian
// uint32 length and then records: a uint8 tag, a uint32 length, the value.
// The first message is the configuration; the second, sent once the cgroup
// exists, its cgroup part. The init stage builds the root in between.
enum {
	CFG_ARG = 1,      // argv element (repeated)
	CFG_EXE = 2,      // the executable's real path, the same inside and outside
	CFG_ENV = 3,      // NAME=VALUE (repeated)
	CFG_DIR = 4,      // working directory inside
	CFG_BIND = 5,     // uint8 writable (2: the state dir), uint8 idmapped, uint32 uid, uint32 gid, path (repeated, parents first)
	CFG_EXE_BIND = 6, // the executable lies outside the visible paths: bind it read-only
	CFG_TMP_SIZE = 7, // uint64 bytes of /tmp, /dev/shm and HOME each
	CFG_HOST_NETNS = 8, // the host's network namespace: none of its own, no lo to bring up
	CFG_NOFILE = 9,   // uint64 RLIMIT_NOFILE
	CFG_UID = 10,     // uint32, the server's uid as seen inside
	CFG_GID = 11,     // uint32
	CFG_USERNS = 12,  // the sandbox has its own user namespace
	CFG_SECCOMP = 13, // BPF program (sock_filter array)
	CFG_ETC = 14,     // name NUL content: an /etc file of the configuration (passwd, group, hosts)
	CFG_FSIZE = 15,   // uint64 RLIMIT_FSIZE in bytes; absent: no limit
	CFG_NOEXEC_TMP = 16, // /tmp and HOME noexec too (/dev/shm always is)
	CFG_TMPFS = 17,   // path of one more tmpfs like HOME's (repeated, parents first)
	CFG_LANDLOCK = 31, // uint64 access beneath /, uint64 access beneath each place, places NUL-separated: the ruleset at LANDLOCK_FD (init_landlock.c)
	CFG_MASK_SOCKET = 26, // path of a unix socket in a grant, covered by an empty read-only file (repeated)
	CFG_PIN = 32,     // a program file, or a directory or symlink on the way, in a writable grant: made a mount point, read-only but for directories (repeated, parents first)
	CG_JOIN = 20,     // cgroup v1 tasks file the forking thread joins (repeated)
	CG_VIEW = 21,     // name NUL host dir [NUL link]...: a cgroup directory shown at CGROUP_MOUNT/name
	CFG_EGRESS = 30,  // uint32 tcp4, uint32 tcp6: make egress capture's sockets and hand them over on EGRESS_FD (init_net.c)
};

// Egress capture (init_net.c): the supervisor's end of a SOCK_SEQPACKET
// pair, as fd 5 beside 0-4, present only with CFG_EGRESS. The init stage
// sends one message on it: the data two uint32 (tcp4, tcp6), the
// descriptors in this order: NETLINK_ROUTE, the DNS stub's UDP and TCP
// (AF_INET), tcp4 AF_INET TCP, tcp6 AF_INET6 TCP. One message holds at
// most EGRESS_MAX_FDS (the kernel's SCM_MAX_FD).
#define EGRESS_FD 5
#define EGRESS_MAX_FDS 253
#define EGRESS_FIXED_FDS 3 // netlink and the DNS stub's two

// The Landlock ruleset the supervisor made, when CFG_LANDLOCK is sent.
// Fixed numbers, so either may come alone (the other's is then a gap).
#define LANDLOCK_FD 6

// argv[0] of the exec'd init stage: the constructor runs the init stage
// when it sees it.
#define INIT_ARG0 "mcpsandbox-init"

// Fixed places inside every sandbox.
#define SANDBOX_HOME "/sandbox" // the server's empty tmpfs HOME
#define SANDBOX_HOSTNAME "mcpsandbox"
// Where cgroup filesystems are mounted, on the host and inside.
#define CGROUP_MOUNT "/sys/fs/cgroup"

// How long a pre-forked init stage and its adopter wait for each other.
#define ADOPT_TIMEOUT_SEC 30

// Per-user kernel budgets a server is charged for. Where the server keeps
// the caller's uid (a user namespace), the caller's other programs draw on
// the same budgets, so each is capped for the sandbox well below the
// kernel's per-user defaults: the rest stays the caller's. Ordinary servers
// need far less (node and python: one inotify instance per watcher, a
// handful of queued signals, no POSIX message queues).
// Inotify counts are ucounts, capped at every user namespace on the way up:
// the sandbox's own namespace gets these (default: unlimited, so only the
// host user's 128 instances applied). The rlimits bound the sandbox's
// share of the user's queued signals and message queue bytes (both
// counted per user namespace, then charged upwards).
#define SANDBOX_MAX_INOTIFY_INSTANCES 16 // of the host user's 128
#define SANDBOX_MAX_INOTIFY_WATCHES 8192 // the kernel's smallest per-user default
#define SANDBOX_RLIMIT_SIGPENDING 1024
#define SANDBOX_RLIMIT_MSGQUEUE 102400 // one default queue (10 x 8KiB); the user has 800KiB

// The capabilities the init stage keeps inside its user namespace (as
// ambient capabilities, since it keeps the caller's uid there): mounts,
// pivot_root, hostname and cgroup namespace (SYS_ADMIN), lo (NET_ADMIN),
// emptying the bounding set (SETPCAP), building the root (DAC_OVERRIDE),
// and the namespace's own per-user limits in /proc/sys/user (SYS_RESOURCE).
#define INIT_CAP_BIT(c) (1ULL << (c))
#define INIT_CAPS (INIT_CAP_BIT(CAP_SYS_ADMIN) | INIT_CAP_BIT(CAP_NET_ADMIN) | \
	INIT_CAP_BIT(CAP_SETPCAP) | INIT_CAP_BIT(CAP_DAC_OVERRIDE) | INIT_CAP_BIT(CAP_SYS_RESOURCE))

// path.c: whether path is dir or lies beneath it, compared as bytes of the
// given lengths (no NUL needed, so Go strings pass as they are). "/"
// holds every path.
bool path_within(const char *path, size_t path_len, const char *dir, size_t dir_len);

// userns_holder.c, for the Go side (userns.go): a child holding a fresh
// user namespace for the supervisor.
long mcpsandbox_userns_holder(int pidfd);

#ifndef INIT_STAGE_GO // the rest is for the C files only

struct str_list {
	char **v; // NULL-terminated
	size_t n;
};

struct bind {
	char *path;
	bool writable, idmapped, state; // state: the server's StateDir
	uint32_t uid, gid; // the owner shown as the server, when idmapped
};

struct etc_file {
	char *name, *data;
	size_t len;
};

struct cgroup_dir {
	char *name; // beneath CGROUP_MOUNT; "" = CGROUP_MOUNT itself (cgroup2)
	char *dir;  // on the host
	struct str_list links;
};

// What CFG_LANDLOCK asks: rules added to the ruleset at LANDLOCK_FD once
// the root is built, then the server restricted by it.
struct landlock_rules {
	bool on;
	uint64_t root_access;    // granted beneath the new root
	uint64_t private_access; // granted beneath each of places
	struct str_list places;  // the sandbox's own tmpfs (/tmp, /dev/shm, HOME, ...)
};

struct init_config {
	struct str_list args, env, join, tmpfs, masked_sockets, pins;
	char *exe, *dir;
	struct bind *binds;
	size_t nbinds;
	struct etc_file *etc;
	size_t netc;
	struct cgroup_dir *view;
	size_t nview;
	bool exe_bind, host_netns, userns, noexec_tmp;
	uint64_t tmp_size, nofile, fsize; // fsize 0: no limit
	uint32_t uid, gid;
	void *seccomp;
	uint32_t seccomp_len; // instructions
	struct { bool on; uint32_t tcp4, tcp6; } egress; // CFG_EGRESS
	struct landlock_rules landlock;
};

// init_main.c: the init stage itself. zygote_sock >= 0: pre-forked by
// zygote.c, its descriptors still to come; unmapped: its user namespace's
// ids are mapped only once it is adopted.
_Noreturn void mcpsandbox_init_run(int zygote_sock, int unmapped);

// init_main.c: strerror in Go's wording (lower case).
const char *err_text(int err);

// init_net.c: with CFG_EGRESS, make the capture sockets in this network
// namespace and hand them to the supervisor on EGRESS_FD; fails through
// init_fail.
void net_egress_handover(const struct init_config *c);

// init_wire.c
int init_read_message(int fd, struct init_config *c, const char **what);

// init_main.c: report a failed setup step to the supervisor and exit.
_Noreturn void init_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// init_fs.c: the new mount API, never following a symlink a server planted.
int fs_open_no_symlinks(int dirfd, const char *path, uint64_t extra_flags);
int fs_clone_tree(int dirfd, const char *path);
int fs_set_attrs(int tree, uint64_t attrs);
int fs_set_idmap(int tree, int userns);
int fs_attach(int tree, int target);
int fs_bind_over(const char *src, const char *dst, uint64_t attrs);
int fs_mkdir_beneath(int dirfd, const char *path);
int fs_mount_point_beneath(int root, const char *path, bool dir);
int fs_write_file(const char *path, const char *data, size_t len);
int write_all(int fd, const char *data, size_t len);

// init_idmap.c: a user namespace mapping a grant's owner to the server.
int idmap_userns(uint32_t owner_uid, uint32_t owner_gid, uint32_t server_uid, uint32_t server_gid);

// init_landlock.c: the rules added once the root is built (init_fail on
// error).
void landlock_add_rules(const struct landlock_rules *l);
// The message for a server's failed landlock_restrict_self.
_Noreturn void landlock_restrict_failed(int err);

// init_root.c
struct prepared_root {
	int root; // the staging tmpfs, O_PATH; -1 when not built
	char err[512]; // why building it failed; reported once the configuration is in
};
void root_prepare(struct prepared_root *p);
void root_finish(struct init_config *c, struct prepared_root *p, void (*enter_cgroup)(struct init_config *));

#endif
