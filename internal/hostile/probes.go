//go:build linux

package main

// probes is every escape class the server tries, grouped as in DESIGN.md §2,
// then the extra classes container escapes have used.
var probes = []probe{
	// Host files.
	{"host_secrets", probeHostSecrets},
	{"write_outside_grants", probeWriteOutside},
	{"symlink_in_granted_dir", probeSymlinkInGrantedDir},
	{"proc_root_traversal", probeProcRootTraversal},
	{"host_service_sockets", probeHostServiceSockets},
	{"grant_sockets", probeGrantSockets},
	{"program_rewrite", probeProgramRewrite},

	// Network.
	{"net_host_loopback_tcp", probeHostLoopbackTCP},
	{"net_host_abstract_unix", probeHostAbstractUnix},
	{"net_host_unix_path", probeHostUnixPath},
	{"net_namespace", probeNetNamespace},
	{"socket_inet", probeSocketInet},
	{"socket_other_families", probeSocketOtherFamilies},
	{"socketpair_other_families", probeSocketpairFamilies},

	// Other processes.
	{"ptrace_host", probePtraceHost},
	{"signal_host", probeSignalHost},
	{"process_vm_host", probeProcessVMHost},
	{"ptrace_seccomp", probePtraceSeccomp},
	{"reaper_access", probeReaperAccess},
	{"host_processes_visible", probeHostProcessesVisible},
	{"proc_exe_write", probeProcExeWrite},

	// Terminal injection.
	{"tty_access", probeTTYAccess},
	{"tiocsti_seccomp", probeTIOCSTISeccomp},

	// What the supervisor hands down.
	{"leaked_fds", probeLeakedFDs},
	{"env_secrets", probeEnvSecrets},

	// Privilege.
	{"uid_root", probeUIDRoot},
	{"setuid_root", probeSetuidRoot},
	{"capabilities", probeCapabilities},
	{"no_new_privs", probeNoNewPrivs},
	{"setuid_binaries", probeSetuidBinaries},
	{"setuid_planting", probeSetuidPlanting},
	{"open_by_handle_at", probeOpenByHandleAt},
	{"setid_shared_mapping", probeSetIDSharedMapping},
	{"locks_on_grants", probeLocksOnGrants},
	{"lease_grant_file", probeLeaseGrantFile},

	// Mounts and namespaces.
	{"mount", probeMount},
	{"user_namespaces", probeUserNamespaces},
	{"other_namespaces", probeOtherNamespaces},
	{"setns", probeSetns},
	{"pivot_root_chroot", probePivotRootChroot},
	{"cgroupfs", probeCgroupfs},

	// Kernel attack surface.
	{"seccomp_active", probeSeccompActive},
	{"seccomp_arch_bypass", probeSeccompArchBypass},
	{"keyctl", probeKeyctl},
	{"bpf", probeBPF},
	{"perf_event_open", probePerfEventOpen},
	{"userfaultfd", probeUserfaultfd},
	{"io_uring", probeIOUring},
	{"kernel_modules", probeKernelModules},
	{"kexec", probeKexec},
	{"reboot", probeReboot},
	{"swap_acct", probeSwapAcct},
	{"raw_io", probeRawIO},
	{"personality_aslr", probePersonality},

	// Devices, /sys, /proc.
	{"dev_nodes", probeDevNodes},
	{"sys_only_cgroup", probeSysOnlyCgroup},
	{"proc_sys_writes", probeProcSysWrites},
	{"sysrq_trigger", probeSysrqTrigger},
	{"proc_masked", probeProcMasked},
	{"kallsyms_addresses", probeKallsyms},
	{"kernel_log", probeKernelLog},
	{"ipc_host", probeIPCHost},
	{"proc_host_info", probeProcHostInfo},
	{"proc_cmdline", probeProcCmdline},
	{"proc_interrupts", probeProcInterrupts},
	{"proc_softirqs", probeProcSoftirqs},
	{"proc_diskstats", probeProcDiskstats},
	{"proc_pressure", probeProcPressure},
	{"proc_loadavg", probeProcLoadavg},
	{"proc_boot_id", probeProcBootID},
	{"mountinfo_host_facts", probeMountInfo},

	// Kernel budgets shared with the host.
	{"aio_budget", probeAIOBudget},
	{"inotify_share", probeInotifyShare},

	// Host-wide settings.
	{"clock_set", probeClockSet},
	{"hostname_set", probeHostnameSet},
	{"rlimit_raise", probeRlimitRaise},
}
