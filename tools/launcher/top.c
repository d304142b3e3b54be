/*
 * top.c: `rlthrottle top [PID...] [--once] [--json]`, the live view of rlthrottle(1) COMMANDS: one line per
 * process and rule, the busiest rule first; the limit beside the rate achieved over the last
 * second and since start; delayed and rejected calls; threads waiting; a sparkline of the last
 * minute. Plain ANSI (no curses): clear, home, reverse video for the heading; the terminal is
 * put in non-canonical mode without echo for `q`, and restored on every way out (q, end of
 * input, SIGINT, SIGTERM, SIGHUP, exit). A stdout that is not a terminal gets one frame and no
 * escape codes.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "clock.h"
#include "pub_view.h"
#include "stats_cmd.h"
#include "top.h"

static volatile sig_atomic_t stop_sig, resized;
static struct termios saved_tio;
static int tio_saved, screen_used;

static void restore(void)
{
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
		tio_saved = 0;
	}
	if (screen_used) {
		fputs("\033[?25h\033[?1049l", stdout); /* cursor back, the user's screen back */
		fflush(stdout);
		screen_used = 0;
	}
}

/* From the SIGBUS handler: only what is async-signal-safe (tcsetattr, write). */
static void restore_in_handler(void)
{
	static const char back[] = "\033[?25h\033[?1049l";
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	if (screen_used && write(STDOUT_FILENO, back, sizeof back - 1) < 0) {
		/* nothing more to do */
	}
}

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

static void usage(FILE *f)
{
	fputs("usage: rlthrottle top [PID...] [--once] [--json] [-d SECONDS]\n"
	      "A live view of running throttled processes (all of this user's when no PID is\n"
	      "given). When stdout is not a terminal, one frame.\n"
	      "  -d, --interval SECONDS  refresh every SECONDS (0.1 to 3600; default 1)\n"
	      "      --once              one frame\n"
	      "      --json              one snapshot as JSON (as rlthrottle stats)\n"
	      "Keys: q quits; space redraws now; s sorts by the next key (busiest, rate,\n"
	      "pid); + and - double and halve the interval.\n",
	      f);
}

struct row {
	const struct rlt_cli_proc *p;
	const struct rlt__pub_rule *r;
	double busy; /* busyness(r), once per frame: the sort compares it */
};

/* What a rule's seconds are scaled to: its limit, or for a rule without a rate (RLT_CONNS) the
 * busiest second of its history. */
static double scale_top(const struct rlt__pub_rule *r)
{
	double top = rlt_cli_limit_per_s(r);
	if (top <= 0)
		for (unsigned s = 0; s < RLT_PUB_HIST; s++)
			if ((double)r->per_sec[s] > top)
				top = (double)r->per_sec[s];
	return top;
}

/* How busy a rule is: its last second against its limit (a rule without a rate, RLT_CONNS: its
 * last second against its busiest), so that a byte rule does not outrank a connection rule
 * for counting in bytes. */
static double busyness(const struct rlt__pub_rule *r)
{
	double lim = scale_top(r), last = (double)r->per_sec[RLT_PUB_HIST - 1];
	return lim > 0 ? last / lim : 0;
}

static int busier(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->busy != y->busy)
		return x->busy > y->busy ? -1 : 1;
	if (x->r->units != y->r->units)
		return x->r->units > y->r->units ? -1 : 1;
	if (x->p->pid != y->p->pid)
		return x->p->pid < y->p->pid ? -1 : 1;
	return x->r->index < y->r->index ? -1 : (x->r->index > y->r->index);
}

/* The last `width` seconds, one character each, scaled to the limit (or the busiest second
 * when the rule has no rate). */
static void sparkline(char *out, size_t len, const struct rlt__pub_rule *r, unsigned width,
                      int utf8)
{
	static const char *const blocks[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
	                                     "\u2585", "\u2586", "\u2587", "\u2588"};
	static const char ascii[] = " .:-=+*#%@";
	double top = scale_top(r);
	size_t n = 0;

	if (width > RLT_PUB_HIST)
		width = RLT_PUB_HIST;
	for (unsigned s = RLT_PUB_HIST - width; s < RLT_PUB_HIST; s++) {
		double f = top > 0 ? (double)r->per_sec[s] / top : 0;
		if (f > 1)
			f = 1;
		const char *c;
		char a[2] = {0, 0};
		if (utf8) {
			unsigned lv = r->per_sec[s] ? 1 + (unsigned)(f * 7.999) : 0;
			c = blocks[lv > 8 ? 8 : lv];
		} else {
			unsigned lv = r->per_sec[s] ? 1 + (unsigned)(f * 8.999) : 0;
			a[0] = ascii[lv > 9 ? 9 : lv];
			c = a;
		}
		size_t cl = strlen(c);
		if (n + cl + 1 > len)
			break;
		memcpy(out + n, c, cl);
		n += cl;
	}
	out[n] = '\0';
}

/* The columns of a row, in order; a width of 0 leaves a column out. */
struct layout {
	int pid, comm, var, rule, limit, last, avg, del, rej, wait;
	int spark; /* the sparkline's characters */
};

/*
 * The widths for `cols` columns (0: no limit, as for a file). What goes first when the width
 * is short: the sparkline, then the average, then RULE and COMMAND narrow, then the counts; the
 * rate of the last second always shows. Leftover width goes back to RULE, then the average,
 * then the sparkline.
 */
static struct layout plan(unsigned cols)
{
	struct layout l = {7, 15, 7, 24, 11, 11, 11, 9, 9, 4, RLT_PUB_HIST};
	int used;
#define USED() (l.pid + l.comm + l.var + l.rule + l.limit + l.last + (l.avg ? l.avg + 1 : 0) + \
	        l.del + l.rej + l.wait + 8)
	if (!cols)
		return l;
	used = USED();
	if (used + 1 + 10 <= (int)cols) {
		l.spark = (int)cols - used - 1;
		if (l.spark > (int)RLT_PUB_HIST)
			l.spark = RLT_PUB_HIST;
		return l;
	}
	l.spark = 0;
	l.avg = 0;
	l.rule = 10;
	l.comm = 8;
	l.del = 7;
	l.rej = 6;
	l.pid = 6;
	used = USED();
	int spare = (int)cols - used;
	if (spare > 0) { /* back to RULE first, then COMMAND */
		int r = spare < 14 ? spare : 14;
		l.rule += r;
		spare -= r;
		r = spare < 7 ? spare : 7;
		l.comm += r;
		spare -= r;
		if (spare >= 12)
			l.avg = 11;
	}
#undef USED
	return l;
}

/* s into a column of w characters: cut with an ellipsis when longer (utf8: "…", else "~"),
 * padded with blanks; right: aligned right. Control characters (another program's text) show
 * as '?'. */
static void cell(FILE *f, const char *s, int w, int right, int utf8)
{
	char buf[128];
	int n = (int)strlen(s), cut = 0;
	if (w <= 0)
		return;
	if (n > w) {
		n = w - 1;
		cut = 1;
	}
	if (n > (int)sizeof buf - 1)
		n = (int)sizeof buf - 1;
	memcpy(buf, s, (size_t)n);
	buf[n] = '\0';
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	int pad = w - n - cut;
	if (right)
		fprintf(f, "%*s", pad, "");
	fputs(buf, f);
	if (cut)
		fputs(utf8 ? "\u2026" : "~", f);
	if (!right)
		fprintf(f, "%*s", pad, "");
}

/* The end of a line: on a terminal, the rest of the old frame's line erased (a redraw over
 * the frame before, without clearing the screen first: no flicker). */
static void eol(FILE *f, int tty)
{
	fputs(tty ? "\033[K\n" : "\n", f);
}

/* A count for DELAYED and REJECTED: what happened, or for a dry-run rule what would have,
 * marked '?'. */
static void count_cell(FILE *f, uint64_t v, uint64_t would, int dry, int w)
{
	char b[32];
	if (dry)
		snprintf(b, sizeof b, "%llu?", (unsigned long long)would);
	else
		snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	cell(f, b, w, 1, 0);
}

enum sort_key { SORT_BUSY, SORT_RATE, SORT_PID, SORT_COUNT };
static enum sort_key sort_by;
static const char *const sort_names[] = {"busiest", "rate", "pid"};

static int by_rate(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t rx = x->r->per_sec[RLT_PUB_HIST - 1], ry = y->r->per_sec[RLT_PUB_HIST - 1];
	if (rx != ry)
		return rx > ry ? -1 : 1;
	return busier(a, b);
}

static int by_pid(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->p->pid != y->p->pid)
		return x->p->pid < y->p->pid ? -1 : 1;
	return x->r->index < y->r->index ? -1 : (x->r->index > y->r->index);
}

/* The rows of a frame: every process's rules sorted as asked, then the shared scopes' totals
 * (*nproc: how many are processes'). NULL when out of memory. */
static struct row *frame_rows(const struct rlt_cli_snap *sn, unsigned *count, unsigned *nproc)
{
	struct row *rows;
	unsigned n = 0;

	for (unsigned i = 0; i < sn->n; i++)
		n += sn->procs[i].n;
	rows = calloc(n + sn->nshared + 1, sizeof *rows);
	if (!rows)
		return NULL;
	n = 0;
	for (unsigned i = 0; i < sn->n; i++)
		for (unsigned k = 0; k < sn->procs[i].n; k++)
			if (sn->procs[i].rules[k].var < RLT_VAR_COUNT) {
				rows[n].p = &sn->procs[i];
				rows[n].r = &sn->procs[i].rules[k];
				rows[n].busy = busyness(rows[n].r);
				n++;
			}
	qsort(rows, n, sizeof *rows,
	      sort_by == SORT_RATE ? by_rate : sort_by == SORT_PID ? by_pid : busier);
	/* the shared scopes' totals after the processes (PID shown as "total") */
	*nproc = n;
	for (unsigned i = 0; i < sn->nshared; i++) {
		rows[n].p = &sn->shared[i];
		rows[n].r = &sn->shared[i].rules[0];
		n++;
	}
	*count = n;
	return rows;
}

/* A line of text, cut at the width on a terminal (never wrapped). */
static void line_cut(FILE *f, char *s, unsigned cols, int tty)
{
	if (tty && cols && strlen(s) > cols)
		s[cols] = '\0';
	fputs(s, f);
	eol(f, tty);
}

/* The title and the columns' heads. */
static void frame_head(FILE *f, const struct rlt_cli_snap *sn, unsigned n, const struct layout *l,
                       unsigned cols, int tty, int utf8, double interval)
{
	char title[200];

	snprintf(title, sizeof title, "rlthrottle top - %u process%s, %u rule%s%s", sn->n,
	         sn->n == 1 ? "" : "es", n, n == 1 ? "" : "s", "");
	if (tty)
		snprintf(title + strlen(title), sizeof title - strlen(title),
		         ", every %gs, by %s   (q quits)", interval, sort_names[sort_by]);
	line_cut(f, title, cols, tty);
	if (tty)
		fputs("\033[7m", f);
	cell(f, "PID", l->pid, 0, utf8), fputc(' ', f);
	cell(f, "COMMAND", l->comm, 0, utf8), fputc(' ', f);
	cell(f, "VAR", l->var, 0, utf8), fputc(' ', f);
	cell(f, "RULE", l->rule, 0, utf8), fputc(' ', f);
	cell(f, "LIMIT", l->limit, 1, utf8), fputc(' ', f);
	cell(f, "LAST 1s", l->last, 1, utf8), fputc(' ', f);
	if (l->avg)
		cell(f, "AVERAGE", l->avg, 1, utf8), fputc(' ', f);
	cell(f, "DELAYED", l->del, 1, utf8), fputc(' ', f);
	cell(f, l->rej < 8 ? "REJECT" : "REJECTED", l->rej, 1, utf8), fputc(' ', f);
	cell(f, "WAIT", l->wait, 1, utf8);
	if (l->spark)
		fputs(" LAST MINUTE", f);
	if (tty)
		fputs("\033[0m", f);
	eol(f, tty);
}

/* One rule's line (a shared scope's total: PID "total"). */
static void frame_rule(FILE *f, const struct rlt_cli_snap *sn, const struct row *row, int total,
                       const struct layout *l, int tty, int utf8)
{
	const struct rlt__pub_rule *r = row->r;
	char lim[32], last[32], avg[32], pid[16], w[16], line[RLT_PUB_HIST * 3 + 1];
	int dry = !r->params_torn && r->params.action == RLT_ACTION_DRY_RUN;

	rlt_cli_fmt_limit(lim, sizeof lim, r);
	rlt_cli_fmt_rate(last, sizeof last, (double)r->per_sec[RLT_PUB_HIST - 1], r);
	rlt_cli_fmt_rate(avg, sizeof avg, rlt_cli_rate_since_start(sn, row->p, r), r);
	snprintf(pid, sizeof pid, total ? "total" : "%d", (int)row->p->pid);
	cell(f, pid, l->pid, 0, utf8), fputc(' ', f);
	cell(f, row->p->comm, l->comm, 0, utf8), fputc(' ', f);
	cell(f, rlt_var_name(r->var) + 4, l->var, 0, utf8), fputc(' ', f); /* no "RLT_" */
	cell(f, r->params_torn ? "?" : r->params.text, l->rule, 0, utf8), fputc(' ', f);
	cell(f, lim, l->limit, 1, utf8), fputc(' ', f);
	cell(f, last, l->last, 1, utf8), fputc(' ', f);
	if (l->avg)
		cell(f, avg, l->avg, 1, utf8), fputc(' ', f);
	count_cell(f, r->delayed, r->would_delay, dry, l->del), fputc(' ', f);
	count_cell(f, r->rejected, r->would_reject, dry, l->rej), fputc(' ', f);
	snprintf(w, sizeof w, "%llu", (unsigned long long)r->waiting);
	cell(f, w, l->wait, 1, utf8);
	if (l->spark) {
		sparkline(line, sizeof line, r, (unsigned)l->spark, utf8);
		fputc(' ', f);
		fputs(line, f);
	}
	eol(f, tty);
}

/* A keyed rule's table in one line: keys tracked and evicted, the three busiest as the width
 * allows. */
static void frame_keys(FILE *f, const struct row *row, unsigned cols, int tty)
{
	const struct rlt__pub_rule *r = row->r;
	char busiest[160], kl[320];
	size_t bl = 0;

	busiest[0] = '\0';
	for (unsigned j = 0; j < r->nbusy && j < 3 && bl < sizeof busiest; j++) {
		int wr = snprintf(busiest + bl, sizeof busiest - bl, "%s%s %llu", j ? ", " : "; busiest ",
		                  r->busy[j].key, (unsigned long long)r->busy[j].units);
		if (wr < 0 || (size_t)wr >= sizeof busiest - bl) {
			busiest[bl] = '\0';
			break;
		}
		bl += (size_t)wr;
	}
	snprintf(kl, sizeof kl, "keys: %d %s rule %u: %llu tracked of %llu, %llu evicted%s",
	         (int)row->p->pid, rlt_var_name(r->var), r->index + 1,
	         (unsigned long long)r->keys_tracked, (unsigned long long)r->params.keys,
	         (unsigned long long)r->keys_evicted, busiest);
	line_cut(f, kl, cols, tty);
}

/* A process's RLT_NET in one line: the conditions in force and what they did. */
static void frame_net(FILE *f, const struct rlt_cli_proc *p, unsigned cols, int tty)
{
	const struct rlt__net_stats *n = &p->net;
	char nl[RLT_PUB_NET_TEXT + 256];

	snprintf(nl, sizeof nl,
	         "net: %d %s: %s (dropped %llu, resets %llu, slices %llu, hangs %llu, connects "
	         "refused %llu, timed out %llu)",
	         (int)p->pid, p->comm, p->net_text[0] ? p->net_text : "(no condition now)",
	         (unsigned long long)n->dropped, (unsigned long long)n->resets,
	         (unsigned long long)n->slices, (unsigned long long)n->hangs,
	         (unsigned long long)n->refused, (unsigned long long)n->timeouts);
	line_cut(f, nl, cols, tty);
}

static void frame(FILE *f, const struct rlt_cli_snap *sn, unsigned cols, unsigned rows_max,
                  int tty, int utf8, double interval)
{
	struct layout l = plan(tty ? cols : 0);
	unsigned n, nproc_rows, used = 2;
	struct row *rows = frame_rows(sn, &n, &nproc_rows);

	if (!rows)
		return;
	frame_head(f, sn, n, &l, cols, tty, utf8, interval);
	for (unsigned i = 0; i < n && (!rows_max || used + 1 < rows_max); i++, used++)
		frame_rule(f, sn, &rows[i], i >= nproc_rows, &l, tty, utf8);
	/* keyed rules: their tables, one line each under the rows, as the height allows */
	for (unsigned i = 0; i < nproc_rows && i < n && (!rows_max || used + 1 < rows_max); i++) {
		if (!rows[i].r->params.keys || rows[i].r->params_torn)
			continue;
		frame_keys(f, &rows[i], cols, tty);
		used++;
	}
	/* network conditions: a line per process that has them, as the height allows */
	unsigned nnet = 0;
	for (unsigned i = 0; i < sn->n; i++) {
		if (!rlt_cli_net_shown(&sn->procs[i]))
			continue;
		nnet++;
		if (!rows_max || used + 1 < rows_max) {
			frame_net(f, &sn->procs[i], cols, tty);
			used++;
		}
	}
	if (nproc_rows == 0 && nnet == 0 && !sn->other_layout) {
		fputs("(no throttled process of this user is running)", f);
		eol(f, tty);
	}
	if (sn->other_layout) { /* an upgrade: the processes started before it, in one line */
		char ol[sizeof sn->other_msg + 16];
		snprintf(ol, sizeof ol, "left out: %s", sn->other_msg);
		line_cut(f, ol, cols, tty);
	}
	if (tty)
		fputs("\033[J", f); /* what the frame before had below this one */
	free(rows);
}

static void term_size(unsigned *cols, unsigned *rows)
{
	struct winsize ws;
	*cols = 80;
	*rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
	}
}

/* The options and PIDs of `top`. -1: go on; else the exit status (--help, a usage error). */
static int top_args(int argc, char **argv, pid_t *pids, unsigned max, unsigned *npids, int *once,
                    int *json, double *interval)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--once")) {
			*once = 1;
		} else if (!strcmp(argv[i], "--json")) {
			*json = 1;
		} else if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--interval") ||
		           !strncmp(argv[i], "--interval=", 11)) {
			const char *v = argv[i][10] == '=' ? argv[i] + 11 : i + 1 < argc ? argv[++i] : NULL;
			char *end = NULL;
			*interval = v ? strtod(v, &end) : 0;
			if (!v || !*v || *end || !(*interval >= 0.1 && *interval <= 3600)) {
				fprintf(stderr, "rlthrottle top: %s needs SECONDS, 0.1 to 3600 (see "
				        "rlthrottle top --help)\n", argv[i]);
				return RLT_CLI_EXIT_USAGE;
			}
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "rlthrottle top: unknown option %s (see rlthrottle top --help)\n",
			        argv[i]);
			return RLT_CLI_EXIT_USAGE;
		} else if (*npids == max || rlt_cli_parse_pid(argv[i], &pids[*npids]) != 0) {
			fprintf(stderr, "rlthrottle top: %s: %s (see rlthrottle top --help)\n", argv[i],
			        *npids == max ? "too many PIDs (256 at most)" : "not a PID");
			return RLT_CLI_EXIT_USAGE;
		} else {
			(*npids)++;
		}
	}
	return -1;
}

/* The live view's terminal: its signals handled, raw input, the alternate screen with no
 * cursor; restore() gives it back on every way out. */
static void screen_enter(void)
{
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	atexit(restore);
	rlt_cli_before_fatal = restore_in_handler;
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		struct termios raw = saved_tio;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0)
			tio_saved = 1;
	}
	screen_used = 1;
	fputs("\033[?1049h\033[?25l\033[2J", stdout); /* the alternate screen, no cursor */
}

/* Between two frames: the interval, or a key, a resize or a signal. 1 when a key quits. The
 * keys change the order and the interval; *input goes 0 at the end of the input (the clock
 * alone refreshes then). */
static int between_frames(double *interval, int *input)
{
	rlt_ns_t until = rlt__now() + (rlt_ns_t)(*interval * 1e9);
	int quit = 0, now_again = 0;

	while (!stop_sig && !resized && !quit && !now_again) {
		rlt_ns_t now = rlt__now();
		if (now >= until)
			break;
		struct pollfd pf = {.fd = STDIN_FILENO, .events = POLLIN};
		int r = poll(&pf, *input ? 1 : 0, (int)((until - now) / 1000000) + 1);
		if (r <= 0)
			continue;
		char c[64];
		ssize_t k = read(STDIN_FILENO, c, sizeof c);
		if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
			*input = 0; /* end of input: refresh on the clock alone */
		for (ssize_t j = 0; j < k; j++) {
			if (c[j] == 'q' || c[j] == 'Q' || c[j] == 3)
				quit = 1;
			else if (c[j] == 's' || c[j] == 'S')
				sort_by = (sort_by + 1) % SORT_COUNT;
			else if (c[j] == '+' && *interval * 2 <= 3600)
				*interval *= 2;
			else if (c[j] == '-' && *interval / 2 >= 0.1)
				*interval /= 2;
			else if (c[j] != ' ' && c[j] != 'r')
				continue;
			now_again = 1; /* a key that changes the view redraws at once */
		}
	}
	return quit;
}

int rlt_cli_top(int argc, char **argv)
{
	pid_t pids[256];
	unsigned npids = 0, cols, rows;
	int once = 0, json = 0, utf8, input = 1;
	double interval = 1;
	struct rlt_cli_snap sn;
	struct rlt_error err;
	int rc = top_args(argc, argv, pids, sizeof pids / sizeof pids[0], &npids, &once, &json,
	                  &interval);

	if (rc >= 0)
		return rc;
	rlt_cli_guard_sigbus();
	setlocale(LC_CTYPE, "");
	utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	/* the PIDs asked for must be ours from the start; later, one that ends drops out */
	if (rlt_cli_snap_take(&sn, pids, npids, 1, 1, &err) != 0) {
		fprintf(stderr, "rlthrottle top: %s\n", err.msg);
		return RLT_CLI_EXIT_USAGE;
	}
	if (json || once || !isatty(STDOUT_FILENO)) {
		if (json)
			rlt_cli_snap_json(stdout, &sn);
		else
			frame(stdout, &sn, 0, 0, 0, utf8, interval);
		rlt_cli_snap_free(&sn);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	screen_enter();
	while (!stop_sig) {
		term_size(&cols, &rows);
		if (resized)
			fputs("\033[2J", stdout);
		resized = 0;
		fputs("\033[H", stdout); /* drawn over the last frame: no flicker */
		frame(stdout, &sn, cols, rows, 1, utf8, interval);
		fflush(stdout);
		rlt_cli_snap_free(&sn);
		if (between_frames(&interval, &input))
			break;
		if (rlt_cli_snap_take(&sn, pids, npids, 0, 1, &err) != 0) {
			restore();
			fprintf(stderr, "rlthrottle top: %s\n", err.msg);
			return 1;
		}
	}
	restore();
	return 0;
}
