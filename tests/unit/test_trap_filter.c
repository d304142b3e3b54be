/* test_trap_filter: the system-call front's filter (tools/launcher/trap_filter.c), run by a small
 * classic-BPF interpreter over the calls it must tell apart: which trap, which pass, which are
 * refused, and that a call it always passes reads neither its arguments nor the instruction
 * pointer (the kernel then caches the answer and runs no filter for it). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "trap_abi.h"
#include "trap_filter.h"

#define BAND 512
#define PROG_IP 0x401000ull
#define OUR_IP (RLT_TRAP_BASE + 0x1234)

static struct sock_filter prog[RLT_TRAP_FILTER_MAX];
static int len;

static int build(unsigned covers)
{
	struct rlt_cli_trap_spec spec = {RLT_TRAP_BASE, RLT_TRAP_SPAN, BAND, covers};
	struct rlt_error err = {{0}};
	len = rlt_cli_trap_filter(&spec, prog, RLT_TRAP_FILTER_MAX, &err);
	return len > 0 ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	return build(RLT_TRAP_SENDS | RLT_TRAP_RECVS);
}

/* Runs the program on d; *read_more: it loaded a field other than nr and arch. */
static uint32_t run(const struct seccomp_data *d, int *read_more)
{
	uint32_t a = 0, pc = 0;
	*read_more = 0;
	for (int steps = 0; steps < 10000 && pc < (uint32_t)len; steps++) {
		const struct sock_filter *f = &prog[pc];
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			assert_true(f->k + 4 <= sizeof *d);
			memcpy(&a, (const char *)d + f->k, 4);
			if (f->k != offsetof(struct seccomp_data, nr) &&
			    f->k != offsetof(struct seccomp_data, arch))
				*read_more = 1;
			pc++;
			break;
		case BPF_JMP | BPF_JA: pc += 1 + f->k; break;
		case BPF_JMP | BPF_JEQ | BPF_K: pc += 1 + (a == f->k ? f->jt : f->jf); break;
		case BPF_JMP | BPF_JGT | BPF_K: pc += 1 + (a > f->k ? f->jt : f->jf); break;
		case BPF_JMP | BPF_JGE | BPF_K: pc += 1 + (a >= f->k ? f->jt : f->jf); break;
		case BPF_JMP | BPF_JSET | BPF_K: pc += 1 + ((a & f->k) ? f->jt : f->jf); break;
		case BPF_ALU | BPF_AND | BPF_K: a &= f->k; pc++; break;
		case BPF_RET | BPF_K: return f->k;
		case BPF_MISC | BPF_TAX: pc++; break;
		default: fail_msg("instruction %u: code %#x not interpreted", pc, f->code);
		}
	}
	fail_msg("the program ran off its end");
	return 0;
}

static uint32_t call(int nr, uint64_t ip, uint64_t a0, uint64_t a1, int *read_more)
{
	struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64, .instruction_pointer = ip};
	d.args[0] = a0;
	d.args[1] = a1;
	return run(&d, read_more);
}

static void network_calls_trap_but_ours_pass(void **state)
{
	int more;
	(void)state;
	assert_int_equal(call(SYS_sendto, PROG_IP, 3, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_sendto, OUR_IP, 3, 0, &more), SECCOMP_RET_ALLOW);
	assert_int_equal(call(SYS_connect, PROG_IP, 3, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_recvmsg, PROG_IP, 600, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_rt_sigprocmask, PROG_IP, 0, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_rt_sigprocmask, OUR_IP, 0, 0, &more), SECCOMP_RET_ALLOW);
	/* just past the handler's window is the program's */
	assert_int_equal(call(SYS_sendto, RLT_TRAP_BASE + RLT_TRAP_SPAN, 3, 0, &more),
	                 SECCOMP_RET_TRAP);
}

static void fd_calls_trap_in_the_band_only(void **state)
{
	int more;
	(void)state;
	assert_int_equal(call(SYS_write, PROG_IP, 1, 0, &more), SECCOMP_RET_ALLOW);
	assert_int_equal(call(SYS_read, PROG_IP, BAND - 1, 0, &more), SECCOMP_RET_ALLOW);
	assert_int_equal(call(SYS_write, PROG_IP, BAND, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_write, OUR_IP, BAND, 0, &more), SECCOMP_RET_ALLOW);
	assert_int_equal(call(SYS_close, PROG_IP, BAND + 3, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_close, PROG_IP, 4, 0, &more), SECCOMP_RET_ALLOW);
	/* dup2 onto the band replaces whatever held it */
	assert_int_equal(call(SYS_dup2, PROG_IP, 4, BAND, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_ioctl, PROG_IP, BAND, FIONBIO, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_ioctl, PROG_IP, BAND, TCGETS, &more), SECCOMP_RET_ALLOW);
}

/* epoll_ctl, even on a socket (a band fd, its third argument), and the waits pass here without
 * reading more than their number, so that the kernel caches the answer: an event loop makes
 * several of each per request. A filter the handler stacks once a wait could hold a socket
 * makes them trap (preload/trap_waits.c). */
static void epoll_ctl_and_waits_pass(void **state)
{
	struct seccomp_data d = {.nr = SYS_epoll_ctl, .arch = AUDIT_ARCH_X86_64,
	                         .instruction_pointer = PROG_IP};
	int more;
	(void)state;
	d.args[0] = 5;
	d.args[2] = BAND + 1;
	assert_int_equal(run(&d, &more), SECCOMP_RET_ALLOW);
	assert_false(more);
	assert_int_equal(call(SYS_poll, PROG_IP, 0, 1, &more), SECCOMP_RET_ALLOW);
	assert_false(more);
	assert_int_equal(call(SYS_epoll_wait, PROG_IP, 5, 0, &more), SECCOMP_RET_ALLOW);
	assert_false(more);
}

static void forks_trap_threads_pass(void **state)
{
	int more;
	(void)state;
	assert_int_equal(call(SYS_clone, PROG_IP, SIGCHLD, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_clone, PROG_IP, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0x7000,
	                      &more),
	                 SECCOMP_RET_ALLOW);
	assert_int_equal(call(SYS_clone, PROG_IP, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, &more),
	                 SECCOMP_RET_ALLOW);
	assert_int_equal(call(SYS_clone3, PROG_IP, 0, 0, &more), SECCOMP_RET_ERRNO | ENOSYS);
}

static void refused_calls(void **state)
{
	struct seccomp_data d = {.nr = 102, .arch = AUDIT_ARCH_I386, .instruction_pointer = PROG_IP};
	int more;
	(void)state;
	assert_int_equal(call(SYS_io_uring_setup, PROG_IP, 8, 0, &more), SECCOMP_RET_ERRNO | ENOSYS);
	/* int 0x80's calls would pass every rule: refused */
	assert_int_equal(run(&d, &more), SECCOMP_RET_ERRNO | ENOSYS);
}

static void calls_always_passed_read_nothing_more(void **state)
{
	static const int nrs[] = {SYS_getpid, SYS_futex, SYS_mmap, SYS_munmap, SYS_nanosleep,
	                          SYS_clock_gettime, SYS_openat, SYS_fstat, SYS_brk, SYS_getppid};
	(void)state;
	for (size_t i = 0; i < sizeof nrs / sizeof nrs[0]; i++) {
		int more;
		assert_int_equal(call(nrs[i], PROG_IP, 5, 6, &more), SECCOMP_RET_ALLOW);
		if (more)
			fail_msg("call %d: the filter read an argument or the instruction pointer "
			         "(the kernel can then not cache it)", nrs[i]);
	}
}

/* Without a send rule nothing of a send traps, without a receive rule nothing of a receive:
 * what still traps is what makes or brings a socket (recvmsg: SCM_RIGHTS) and the fd calls
 * that keep the band. */
static void classes_left_out_pass(void **state)
{
	static const int sends[] = {SYS_sendto, SYS_sendmsg, SYS_sendmmsg, SYS_write, SYS_writev,
	                            SYS_pwritev2, SYS_sendfile};
	static const int recvs[] = {SYS_recvfrom, SYS_recvmmsg, SYS_read, SYS_readv, SYS_preadv2};
	int more;
	(void)state;
	assert_int_equal(build(RLT_TRAP_RECVS), 0);
	for (size_t i = 0; i < sizeof sends / sizeof sends[0]; i++)
		assert_int_equal(call(sends[i], PROG_IP, BAND, 0, &more), SECCOMP_RET_ALLOW);
	for (size_t i = 0; i < sizeof recvs / sizeof recvs[0]; i++)
		assert_int_equal(call(recvs[i], PROG_IP, BAND, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(build(RLT_TRAP_SENDS), 0);
	for (size_t i = 0; i < sizeof sends / sizeof sends[0]; i++)
		assert_int_equal(call(sends[i], PROG_IP, BAND, 0, &more), SECCOMP_RET_TRAP);
	for (size_t i = 0; i < sizeof recvs / sizeof recvs[0]; i++)
		assert_int_equal(call(recvs[i], PROG_IP, BAND, 0, &more), SECCOMP_RET_ALLOW);
	assert_int_equal(build(0), 0);
	assert_int_equal(call(SYS_recvmsg, PROG_IP, BAND, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_socket, PROG_IP, 2, 1, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_close, PROG_IP, BAND, 0, &more), SECCOMP_RET_TRAP);
	assert_int_equal(call(SYS_sendto, PROG_IP, BAND, 0, &more), SECCOMP_RET_ALLOW);
	assert_int_equal(call(SYS_read, PROG_IP, BAND, 0, &more), SECCOMP_RET_ALLOW);
	assert_int_equal(build(RLT_TRAP_SENDS | RLT_TRAP_RECVS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(network_calls_trap_but_ours_pass),
		cmocka_unit_test(fd_calls_trap_in_the_band_only),
		cmocka_unit_test(epoll_ctl_and_waits_pass),
		cmocka_unit_test(forks_trap_threads_pass),
		cmocka_unit_test(refused_calls),
		cmocka_unit_test(calls_always_passed_read_nothing_more),
		cmocka_unit_test(classes_left_out_pass),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
