/* Makes one i386 syscall (getpid, number 20) through int 0x80 from a 64-bit
   process; seccomp sees it with AUDIT_ARCH_I386. Exits 0 if it returned. */
int main(void) {
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
	return ret > 0 ? 0 : 1;
}
